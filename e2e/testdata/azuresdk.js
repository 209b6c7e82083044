// Drives recur with Azure's own Node SDK for Scheduler (azure-arm-scheduler)
// as a client of Azure Scheduler would: the SDK's model classes, its
// methods, its serializer and its long-running-operation poller, unchanged.
// TestAzureNodeSDK (azuresdk_test.go) runs it with one argument, a JSON
// object of what to reach (see config below), and asserts on what it
// prints on stdout: one JSON object naming each step with what the SDK
// answered, {"ok": true, "value": ...}, or the error it reported,
// {"ok": false, "error": {...}}. The first unexpected error ends the run.
'use strict';

const msRest = require('ms-rest');
const moment = require('moment');
const SchedulerManagementClient = require('azure-arm-scheduler');

const config = JSON.parse(process.argv[2]);
// baseUri: recur's URL; token: the bearer token; subscriptionId,
// resourceGroup, collection: where; target: the job's HTTPS endpoint;
// startTime, endTime: the job's (RFC 3339); password, sasToken: its
// secrets, which no GET shows.
const { baseUri, token, subscriptionId, resourceGroup, collection, target, startTime, endTime, password, sasToken } = config;

const client = new SchedulerManagementClient(new msRest.TokenCredentials(token), subscriptionId, baseUri, {
  // The client sets 30 s between polls of a long-running operation and
  // ms-rest-azure's PollingState then ignores the answer's Retry-After;
  // 1 s is what recur's Retry-After says.
  longRunningOperationRetryTimeout: 1,
});
const models = client.models;

const steps = {};
const deadline = (ms) => Date.now() + ms;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Stop is thrown to end the run after a step failed; the steps so far are
// printed all the same.
class Stop extends Error {}

function errorOf(err) {
  return {
    statusCode: err.statusCode,
    code: err.code,
    message: err.message,
    body: err.body,
  };
}

// snapshot is value as JSON has it now: a model the script changes
// later is recorded as the SDK answered it.
function snapshot(value) {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

// step runs fn, records its value under name and returns it; an error is
// recorded and ends the run.
async function step(name, fn) {
  try {
    const value = await fn();
    steps[name] = { ok: true, value: snapshot(value) };
    return value;
  } catch (err) {
    steps[name] = { ok: false, error: errorOf(err) };
    throw new Stop(name);
  }
}

// failing runs fn, which must fail, and records the error it reported.
async function failing(name, fn) {
  try {
    const value = await fn();
    steps[name] = { ok: true, value: snapshot(value) };
  } catch (err) {
    steps[name] = { ok: false, error: errorOf(err) };
  }
}

// until calls fn until seen accepts its value, for up to 30 s: lists read
// a store that takes each write a moment after it is answered, and a run
// writes its history once it has ended.
async function until(name, fn, seen) {
  const end = deadline(30000);
  for (;;) {
    const value = await step(name, fn);
    if (seen(value)) {
      return value;
    }
    if (Date.now() > end) {
      steps[name] = { ok: false, error: { message: 'not seen within 30 s' }, value };
      throw new Stop(name);
    }
    await sleep(200);
  }
}

// all returns every item of a paged list, following nextLink with next.
async function all(first, next) {
  const items = [];
  for (let page = await first(); ; page = await next(page.nextLink)) {
    items.push(...page);
    if (!page.nextLink) {
      return items;
    }
  }
}

const names = (items) => items.map((item) => item.name);

async function collections() {
  const definition = new models.JobCollectionDefinition();
  definition.location = 'West Europe';
  definition.tags = { team: 'sdk' };
  definition.properties = new models.JobCollectionProperties();
  definition.properties.sku = new models.Sku();
  definition.properties.sku.name = 'Standard';
  definition.properties.quota = new models.JobCollectionQuota();
  definition.properties.quota.maxJobCount = 10;
  definition.properties.quota.maxRecurrence = new models.JobMaxRecurrence();
  definition.properties.quota.maxRecurrence.frequency = 'Minute';
  definition.properties.quota.maxRecurrence.interval = 1;
  await step('jobCollections.createOrUpdate', () =>
    client.jobCollections.createOrUpdate(resourceGroup, collection, definition));
  await step('jobCollections.get', () => client.jobCollections.get(resourceGroup, collection));
  await until('jobCollections.listByResourceGroup',
    () => all(() => client.jobCollections.listByResourceGroup(resourceGroup),
      (link) => client.jobCollections.listByResourceGroupNext(link)),
    (list) => names(list).includes(collection));
  await until('jobCollections.listBySubscription',
    () => all(() => client.jobCollections.listBySubscription(),
      (link) => client.jobCollections.listBySubscriptionNext(link)),
    (list) => names(list).includes(collection));

  const patch = new models.JobCollectionDefinition();
  patch.properties = new models.JobCollectionProperties();
  patch.properties.quota = new models.JobCollectionQuota();
  patch.properties.quota.maxJobCount = 20;
  await step('jobCollections.patch', () => client.jobCollections.patch(resourceGroup, collection, patch));

  // GET, change one member, PUT back: the SDK sends the collection's
  // name too, which its model does not mark read-only.
  const read = await step('jobCollections.get before put back', () => client.jobCollections.get(resourceGroup, collection));
  read.tags.stage = 'put back';
  await step('jobCollections.createOrUpdate put back', async () => {
    const res = await client.jobCollections.createOrUpdateWithHttpOperationResponse(resourceGroup, collection, read);
    return { statusCode: res.response.statusCode, sent: JSON.parse(res.request.body), body: res.body };
  });
}

// disableEnable disables the collection, then enables it. Both are
// long-running operations, which end once every job of the collection
// has taken the change: with jobs, recur answers 202 and the SDK polls
// the Location until it answers 200.
async function disableEnable() {
  await step('jobCollections.disable', () => client.jobCollections.disable(resourceGroup, collection));
  await step('jobCollections.get disabled', () => client.jobCollections.get(resourceGroup, collection));
  await step('jobs.get collection disabled', () => client.jobs.get(resourceGroup, collection, 'second'));
  await step('jobCollections.enable', () => client.jobCollections.enable(resourceGroup, collection));
  await step('jobCollections.get enabled', () => client.jobCollections.get(resourceGroup, collection));
  await step('jobs.get collection enabled', () => client.jobs.get(resourceGroup, collection, 'second'));
}

// richJob is a job of every part an Azure client sets: an HTTPS request
// with headers, a body and Basic authentication, a retry policy, an error
// action to a storage queue, and a monthly recurrence of an advanced
// schedule between startTime and endTime.
function richJob() {
  const auth = new models.BasicAuthentication();
  auth.type = 'Basic';
  auth.username = 'sdk-user';
  auth.password = password;
  const request = new models.HttpRequest();
  request.uri = target + '/hook';
  request.method = 'POST';
  request.headers = { 'Content-Type': 'application/json', 'X-Sdk': 'azure-arm-scheduler' };
  request.body = '{"from":"sdk"}';
  request.authentication = auth;

  const retry = new models.RetryPolicy();
  retry.retryType = 'Fixed';
  retry.retryInterval = moment.duration('PT1M');
  retry.retryCount = 2;

  const queue = new models.StorageQueueMessage();
  queue.storageAccount = 'sdkaccount';
  queue.queueName = 'sdk-errors';
  queue.sasToken = sasToken;
  queue.message = 'the job failed';
  const errorAction = new models.JobErrorAction();
  errorAction.type = 'StorageQueue';
  errorAction.queueMessage = queue;

  const action = new models.JobAction();
  action.type = 'Https';
  action.request = request;
  action.retryPolicy = retry;
  action.errorAction = errorAction;

  const firstMonday = new models.JobRecurrenceScheduleMonthlyOccurrence();
  firstMonday.day = 'Monday';
  firstMonday.occurrence = 1;
  const lastFriday = new models.JobRecurrenceScheduleMonthlyOccurrence();
  lastFriday.day = 'Friday';
  lastFriday.occurrence = -1;
  const schedule = new models.JobRecurrenceSchedule();
  schedule.hours = [2];
  schedule.minutes = [30];
  schedule.monthlyOccurrences = [firstMonday, lastFriday];
  const recurrence = new models.JobRecurrence();
  recurrence.frequency = 'Month';
  recurrence.interval = 1;
  recurrence.endTime = new Date(endTime);
  recurrence.schedule = schedule;

  const job = new models.JobDefinition();
  job.properties = new models.JobProperties();
  job.properties.startTime = new Date(startTime);
  job.properties.action = action;
  job.properties.recurrence = recurrence;
  job.properties.state = 'Enabled';
  return job;
}

// simpleJob is a second job, for a list of two pages.
function simpleJob() {
  const request = new models.HttpRequest();
  request.uri = target + '/second';
  request.method = 'GET';
  const action = new models.JobAction();
  action.type = 'Https';
  action.request = request;
  const recurrence = new models.JobRecurrence();
  recurrence.frequency = 'Day';
  recurrence.interval = 1;
  const job = new models.JobDefinition();
  job.properties = new models.JobProperties();
  job.properties.startTime = new Date(startTime);
  job.properties.action = action;
  job.properties.recurrence = recurrence;
  return job;
}

async function createJobs() {
  const jobs = client.jobs;
  await step('jobs.createOrUpdate', () => jobs.createOrUpdate(resourceGroup, collection, 'rich', richJob()));
  await step('jobs.get', () => jobs.get(resourceGroup, collection, 'rich'));
  await step('jobs.createOrUpdate second', () => jobs.createOrUpdate(resourceGroup, collection, 'second', simpleJob()));
  // $top=1: each page holds one job, and the SDK's listNext follows
  // recur's nextLink to the next.
  await until('jobs.list',
    async () => {
      const pages = [];
      for (let page = await jobs.list(resourceGroup, collection, { top: 1 }); ; page = await jobs.listNext(page.nextLink)) {
        pages.push(names(page));
        if (!page.nextLink) {
          return pages;
        }
      }
    },
    (pages) => pages.flat().length === 2);
}

async function changeJob() {
  const jobs = client.jobs;
  const disable = new models.JobDefinition();
  disable.properties = new models.JobProperties();
  disable.properties.state = 'Disabled';
  await step('jobs.patch', () => jobs.patch(resourceGroup, collection, 'rich', disable));

  await step('jobs.run', () => jobs.run(resourceGroup, collection, 'rich'));
  await until('jobs.listJobHistory', () => jobs.listJobHistory(resourceGroup, collection, 'rich'),
    (history) => history.length > 0);

  // GET, change one member of what the SDK read, PUT it back: the SDK
  // serializes the model it deserialized. No GET shows a secret, so the
  // password and the SAS token are given again, as Azure required too.
  const read = await step('jobs.get before put back', () => jobs.get(resourceGroup, collection, 'rich'));
  read.properties.action.retryPolicy.retryCount = 3;
  read.properties.action.request.authentication.password = password;
  read.properties.action.errorAction.queueMessage.sasToken = sasToken;
  await step('jobs.createOrUpdate put back', async () => {
    const res = await jobs.createOrUpdateWithHttpOperationResponse(resourceGroup, collection, 'rich', read);
    return { statusCode: res.response.statusCode, sent: JSON.parse(res.request.body), body: res.body };
  });
  await step('jobs.get after put back', () => jobs.get(resourceGroup, collection, 'rich'));

  await step('jobs.deleteMethod', () => jobs.deleteMethod(resourceGroup, collection, 'rich'));
  await failing('jobs.get deleted', () => jobs.get(resourceGroup, collection, 'rich'));
}

async function main() {
  steps.client = { ok: true, value: {
    version: require('azure-arm-scheduler/package.json').version,
    apiVersion: client.apiVersion,
  } };
  try {
    await collections();
    await createJobs();
    await disableEnable();
    await changeJob();
    // DELETE of a collection is a long-running operation too; the job
    // 'second' is still there.
    await step('jobCollections.deleteMethod', () => client.jobCollections.deleteMethod(resourceGroup, collection));
    await failing('jobCollections.get deleted', () => client.jobCollections.get(resourceGroup, collection));
  } catch (err) {
    if (!(err instanceof Stop)) {
      steps.script = { ok: false, error: { message: String(err && err.stack || err) } };
    }
  }
  process.stdout.write(JSON.stringify(steps) + '\n');
}

main();
