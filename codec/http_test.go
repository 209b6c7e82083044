package codec_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/recurhq/recur/codec"
)

const uiOrigin = "http://127.0.0.1:8233"

// post sends payloads to the handler's path and returns the status and
// the payloads answered.
func post(t *testing.T, h http.Handler, path string, payloads []*commonpb.Payload, header http.Header) (int, []*commonpb.Payload, http.Header) {
	t.Helper()
	body, err := json.Marshal(&commonpb.Payloads{Payloads: payloads})
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Namespace", "default")
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return rec.Code, nil, rec.Header()
	}
	var out commonpb.Payloads
	require.NoError(t, protojson.Unmarshal(rec.Body.Bytes(), &out), rec.Body.String())
	return rec.Code, out.Payloads, rec.Header()
}

// TestHandlerDecodesForTheWebUI: the remote codec protocol the Web UI and
// the CLI speak: /codec/decode answers the plain payload; /codec/encode
// encrypts.
func TestHandlerDecodesForTheWebUI(t *testing.T) {
	keys := newKeys(t)
	enc, err := codec.New(keys).Encode([]*commonpb.Payload{payload(t, secret)})
	require.NoError(t, err)
	h := codec.Handler(keys, uiOrigin)

	status, got, header := post(t, h, "/codec/decode", enc, http.Header{"Origin": {uiOrigin}})
	require.Equal(t, http.StatusOK, status)
	require.Len(t, got, 1)
	var s string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(got[0], &s))
	require.Equal(t, secret, s)
	require.Equal(t, uiOrigin, header.Get("Access-Control-Allow-Origin"))

	status, got, _ = post(t, h, "/codec/encode", []*commonpb.Payload{payload(t, "x")}, nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, codec.EncodingEncrypted, string(got[0].Metadata[codec.MetadataEncoding]))

	other := codec.Handler(newKeys(t))
	status, _, _ = post(t, other, "/codec/decode", enc, nil)
	require.Equal(t, http.StatusBadRequest, status, "a payload of an unknown key is an error, not garbage")

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/codec/decode", nil))
	require.Equal(t, http.StatusNotFound, rec.Code)
}

func TestHandlerCORS(t *testing.T) {
	h := codec.Handler(newKeys(t), uiOrigin)
	preflight := func(origin string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodOptions, "/codec/decode", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,x-namespace")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	rec := preflight(uiOrigin)
	require.Equal(t, http.StatusNoContent, rec.Code)
	require.Equal(t, uiOrigin, rec.Header().Get("Access-Control-Allow-Origin"))
	allowed := strings.ToLower(rec.Header().Get("Access-Control-Allow-Headers"))
	for _, h := range []string{"authorization", "x-namespace", "content-type"} {
		require.Contains(t, allowed, h)
	}
	require.Equal(t, "true", rec.Header().Get("Access-Control-Allow-Credentials"))

	rec = preflight("https://evil.example")
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Empty(t, rec.Header().Get("Access-Control-Allow-Origin"))

	_, _, header := post(t, h, "/codec/encode", []*commonpb.Payload{payload(t, "x")}, http.Header{"Origin": {"https://evil.example"}})
	require.Empty(t, header.Get("Access-Control-Allow-Origin"), "a browser on another origin cannot read the answer")
}

func TestHandlerRefusesHugeBodies(t *testing.T) {
	h := codec.Handler(newKeys(t))
	rec := httptest.NewRecorder()
	body := io.MultiReader(strings.NewReader(`{"payloads":[{"data":"`), strings.NewReader(strings.Repeat("A", 40<<20)), strings.NewReader(`"}]}`))
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/codec/decode", body))
	require.Equal(t, http.StatusBadRequest, rec.Code)
}
