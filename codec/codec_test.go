package codec_test

import (
	"bytes"
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/recurhq/recur/codec"
)

// secret is what a job's action could carry; it must never show in an
// encoded payload.
const secret = "sv=2026-01-01&sig=s3cr3tSASs1gnature"

type action struct {
	URI      string `json:"uri"`
	Password string `json:"password"`
}

func newKeys(t *testing.T) *codec.Keys {
	t.Helper()
	k, err := codec.Generate()
	require.NoError(t, err)
	return k
}

func TestRoundTripThroughTheDataConverter(t *testing.T) {
	dc := codec.DataConverter(newKeys(t))
	in := action{URI: "https://example.com/?" + secret, Password: "hunter2"}
	p, err := dc.ToPayload(in)
	require.NoError(t, err)
	raw, err := proto.Marshal(p)
	require.NoError(t, err)
	require.NotContains(t, string(raw), secret)
	require.NotContains(t, string(raw), "hunter2")
	require.NotContains(t, string(raw), "json/plain", "the original encoding is encrypted too")

	var out action
	require.NoError(t, dc.FromPayload(p, &out))
	require.Equal(t, in, out)

	ps, err := dc.ToPayloads("a", 1, in)
	require.NoError(t, err)
	var s string
	var n int
	var a action
	require.NoError(t, dc.FromPayloads(ps, &s, &n, &a))
	require.Equal(t, []any{"a", 1, in}, []any{s, n, a})
}

func TestEncodeNamesTheCurrentKeyAndDiffersEachTime(t *testing.T) {
	k := newKeys(t)
	c := codec.New(k)
	plain := payload(t, secret)
	first, err := c.Encode([]*commonpb.Payload{plain})
	require.NoError(t, err)
	second, err := c.Encode([]*commonpb.Payload{plain})
	require.NoError(t, err)
	for _, p := range []*commonpb.Payload{first[0], second[0]} {
		require.Equal(t, codec.EncodingEncrypted, string(p.Metadata[codec.MetadataEncoding]))
		require.Equal(t, k.Current(), string(p.Metadata[codec.MetadataKeyID]))
		require.Len(t, p.Metadata, 2, "no other metadata leaks in clear")
	}
	require.NotEqual(t, first[0].Data, second[0].Data, "a fresh nonce each time")
	require.NotEqual(t, first[0].Data[:12], second[0].Data[:12])
}

func TestTamperedPayloadsFail(t *testing.T) {
	c := codec.New(newKeys(t))
	enc, err := c.Encode([]*commonpb.Payload{payload(t, "x")})
	require.NoError(t, err)
	for i := range enc[0].Data {
		bad := proto.Clone(enc[0]).(*commonpb.Payload)
		bad.Data[i] ^= 0x01
		_, err := c.Decode([]*commonpb.Payload{bad})
		require.Error(t, err, "byte %d flipped", i)
	}
	short := proto.Clone(enc[0]).(*commonpb.Payload)
	short.Data = short.Data[:20]
	_, err = c.Decode([]*commonpb.Payload{short})
	require.ErrorContains(t, err, "too short")

	noID := proto.Clone(enc[0]).(*commonpb.Payload)
	delete(noID.Metadata, codec.MetadataKeyID)
	_, err = c.Decode([]*commonpb.Payload{noID})
	require.ErrorContains(t, err, codec.MetadataKeyID)
}

func TestAnotherKeyUnderTheSameIDFails(t *testing.T) {
	k := newKeys(t)
	enc, err := codec.New(k).Encode([]*commonpb.Payload{payload(t, "x")})
	require.NoError(t, err)
	other, err := codec.NewKeys(k.Current(), map[string][]byte{k.Current(): bytes.Repeat([]byte{7}, codec.KeySize)})
	require.NoError(t, err)
	_, err = codec.New(other).Decode(enc)
	require.ErrorContains(t, err, "authentication failed")
}

// TestRotation: a payload encrypted under the old current key still reads
// once a new key is current, and new payloads use the new key.
func TestRotation(t *testing.T) {
	old := newKeys(t)
	dcOld := codec.DataConverter(old)
	p, err := dcOld.ToPayload(action{Password: "before"})
	require.NoError(t, err)

	rotated, err := old.WithNewKey(true)
	require.NoError(t, err)
	require.NotEqual(t, old.Current(), rotated.Current())
	require.ElementsMatch(t, append(old.IDs(), rotated.Current()), rotated.IDs())
	// Through the key file, as an operator rotates.
	data, err := rotated.MarshalJSON()
	require.NoError(t, err)
	rotated, err = codec.Parse(data)
	require.NoError(t, err)

	dcNew := codec.DataConverter(rotated)
	var got action
	require.NoError(t, dcNew.FromPayload(p, &got))
	require.Equal(t, "before", got.Password)

	q, err := dcNew.ToPayload(action{Password: "after"})
	require.NoError(t, err)
	require.Equal(t, rotated.Current(), string(q.Metadata[codec.MetadataKeyID]))
	require.Error(t, dcOld.FromPayload(q, &got), "the old set lacks the new key")

	kept, err := old.WithNewKey(false)
	require.NoError(t, err)
	require.Equal(t, old.Current(), kept.Current(), "a key added for later stays unused")
	require.Len(t, kept.IDs(), 2)
	var newID string
	for _, id := range kept.IDs() {
		if id != old.Current() {
			newID = id
		}
	}
	switched, err := kept.WithCurrent(newID)
	require.NoError(t, err)
	require.Equal(t, newID, switched.Current())
	_, err = kept.WithCurrent("nope")
	require.ErrorContains(t, err, `current key "nope" is not among the keys`)
}

func TestUnknownKeyFailsWithoutKeyMaterial(t *testing.T) {
	k := newKeys(t)
	enc, err := codec.New(k).Encode([]*commonpb.Payload{payload(t, secret)})
	require.NoError(t, err)
	other := newKeys(t)
	_, decodeErr := codec.New(other).Decode(enc)
	require.ErrorContains(t, decodeErr, k.Current())
	require.ErrorContains(t, decodeErr, "not in the key file")
	require.NotContains(t, decodeErr.Error(), secret)
	for _, keys := range []*codec.Keys{k, other} {
		data, err := keys.MarshalJSON()
		require.NoError(t, err)
		require.NotContains(t, decodeErr.Error(), keyOf(t, data, keys.Current()))
		require.NotContains(t, keys.String(), keyOf(t, data, keys.Current()), "printing Keys shows IDs only")
	}
}

func TestPlainPayloadsPassThrough(t *testing.T) {
	c := codec.New(newKeys(t))
	plain := []*commonpb.Payload{payload(t, "written before encryption"), {Metadata: map[string][]byte{"encoding": []byte("binary/null")}}}
	out, err := c.Decode(plain)
	require.NoError(t, err)
	require.Len(t, out, 2)
	for i := range plain {
		require.True(t, proto.Equal(plain[i], out[i]))
	}
	var s string
	p := plain[0]
	require.NoError(t, codec.DataConverter(newKeys(t)).FromPayload(p, &s))
	require.Equal(t, "written before encryption", s)
}

func payload(t *testing.T, v any) *commonpb.Payload {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	require.NoError(t, err)
	return p
}

// keyOf returns the base64 key of id in a key file's JSON.
func keyOf(t *testing.T, data []byte, id string) string {
	t.Helper()
	i := bytes.Index(data, []byte(`"`+id+`": "`))
	require.GreaterOrEqual(t, i, 0)
	rest := data[i+len(id)+5:]
	key := string(rest[:bytes.IndexByte(rest, '"')])
	raw, err := base64.StdEncoding.DecodeString(key)
	require.NoError(t, err)
	require.Len(t, raw, codec.KeySize)
	return key
}

// TestNilPassesThrough: the default converter's nil holds nothing and
// stays as it is, so that a memo upsert of it deletes the field; a
// payload that only claims to be nil and carries data or other metadata
// is encrypted.
func TestNilPassesThrough(t *testing.T) {
	c := codec.New(newKeys(t))
	null, err := converter.GetDefaultDataConverter().ToPayload(nil)
	require.NoError(t, err)
	out, err := c.Encode([]*commonpb.Payload{null})
	require.NoError(t, err)
	require.True(t, proto.Equal(null, out[0]), "nil as it is: %v", out[0])

	withData := &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(converter.MetadataEncodingNil)}, Data: []byte(secret)}
	withMeta := &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(converter.MetadataEncodingNil), "x": []byte(secret)}}
	out, err = c.Encode([]*commonpb.Payload{withData, withMeta})
	require.NoError(t, err)
	for _, p := range out {
		require.Equal(t, codec.EncodingEncrypted, string(p.Metadata[codec.MetadataEncoding]))
	}
}
