package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBadOTLPSettingsStopAtStart: an endpoint that is no http(s) URL, one
// carrying credentials or a query, or a protocol recur cannot export
// over stops every role before anything starts, naming what is wrong.
func TestBadOTLPSettingsStopAtStart(t *testing.T) {
	for _, c := range []struct {
		endpoint, protocol, want string
	}{
		{"127.0.0.1:4318", "", "want an http or https URL"},
		{"ftp://127.0.0.1:4318", "", "want an http or https URL"},
		{"ftp://user:secret@127.0.0.1:4318", "", "want an http or https URL"},
		{"http://", "", "want an http or https URL"},
		{"http://user:secret@127.0.0.1:4318", "", "user info and queries are refused"},
		{"http://127.0.0.1:4318?token=secret", "", "user info and queries are refused"},
		{"http://127.0.0.1:4318", "http/json", "recur exports traces over grpc or http/protobuf"},
	} {
		t.Run(c.endpoint+" "+c.protocol, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", c.protocol)
			args := []string{"--otlp-endpoint", c.endpoint}
			var stderr bytes.Buffer
			require.Equal(t, 2, runDev(context.Background(), append([]string{"--http-addr", "127.0.0.1:0"}, args...), &stderr))
			require.Contains(t, stderr.String(), c.want)
			require.NotContains(t, stderr.String(), "secret", "the refusal does not echo a credential")
			for name, r := range map[string]roles{"worker": {worker: true}, "api": {api: true}, "serve": {worker: true, api: true}} {
				stderr.Reset()
				require.Equal(t, 2, runCluster(context.Background(), name, r, append([]string{"--insecure-no-encryption"}, args...), &stderr), name)
				require.Contains(t, stderr.String(), c.want, name)
			}
		})
	}
}
