package azurite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"
)

// QueueURL returns the URL of queue name at endpoint, as Start returns it.
func QueueURL(endpoint, name string) string {
	return strings.ReplaceAll(endpoint, "{account}", Account) + "/" + name
}

// NewQueue creates queue name at endpoint and returns a client that
// authenticates with the account key: what a test reads messages back with.
func NewQueue(t testing.TB, endpoint, name string) *azqueue.QueueClient {
	t.Helper()
	cred, err := azqueue.NewSharedKeyCredential(Account, Key)
	if err != nil {
		t.Fatalf("azurite credential: %v", err)
	}
	q, err := azqueue.NewQueueClientWithSharedKeyCredential(QueueURL(endpoint, name), cred, nil)
	if err != nil {
		t.Fatalf("queue client for %s: %v", name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := q.Create(ctx, nil); err != nil {
		t.Fatalf("create queue %s: %v", name, err)
	}
	return q
}

// SAS returns a service SAS token for queue name (without its '?'), signed
// with the account key, granting perms for an hour: a real one, which
// Azurite checks as Azure does.
func SAS(t testing.TB, name string, perms sas.QueuePermissions) string {
	t.Helper()
	cred, err := azqueue.NewSharedKeyCredential(Account, Key)
	if err != nil {
		t.Fatalf("azurite credential: %v", err)
	}
	now := time.Now().UTC()
	qp, err := sas.QueueSignatureValues{
		Protocol:    sas.ProtocolHTTPSandHTTP,
		StartTime:   now.Add(-5 * time.Minute),
		ExpiryTime:  now.Add(time.Hour),
		Permissions: perms.String(),
		QueueName:   name,
	}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatalf("sign SAS for %s: %v", name, err)
	}
	return qp.Encode()
}
