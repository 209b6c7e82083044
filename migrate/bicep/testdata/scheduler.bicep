// A job collection and two jobs in Bicep, in the shape Azure Scheduler's
// users wrote them: a parameter with a default, an object variable for
// the retry policy, a nested job by its parent, a job named
// 'collection/job' at the top level.
@description('The job collection.')
param collectionName string = 'bicep-ops'

param location string = 'westeurope'

@secure()
param hookPassword string = ''

var retry = {
  retryType: 'Fixed'
  retryInterval: 'PT1M'
  retryCount: 3
}

resource collection 'Microsoft.Scheduler/jobCollections@2016-03-01' = {
  name: collectionName
  location: location
  properties: {
    sku: {
      name: 'Standard'
    }
    state: 'Enabled'
  }
}

resource nightly 'Microsoft.Scheduler/jobCollections/jobs@2016-03-01' = {
  parent: collection
  name: 'nightly'
  properties: {
    startTime: '2030-01-01T02:00:00Z'
    state: 'Enabled'
    action: {
      type: 'Https'
      request: {
        uri: 'https://hooks.example.com/nightly'
        method: 'POST'
        authentication: {
          type: 'Basic'
          username: 'scheduler'
          password: hookPassword
        }
      }
      retryPolicy: retry
    }
    recurrence: {
      frequency: 'Day'
      interval: 1
    }
  }
}

resource weekly 'Microsoft.Scheduler/jobCollections/jobs@2016-03-01' = {
  name: '${collectionName}/weekly'
  dependsOn: [
    collection
  ]
  properties: {
    startTime: '2030-01-05T03:00:00Z'
    action: {
      type: 'Http'
      request: {
        uri: 'http://hooks.example.com/weekly'
        method: 'GET'
      }
    }
    recurrence: {
      frequency: 'Week'
      interval: 1
      schedule: {
        weekDays: [
          'Sunday'
        ]
      }
    }
  }
}
