// Package codec encrypts the payloads recur writes to Temporal: workflow
// inputs, update and signal arguments, activity inputs and results, memos.
// A job's definition, its SAS tokens and passwords included, travels in
// those payloads; with the codec, the Temporal database and its histories
// hold them only encrypted (AES-256-GCM).
//
// Failures' messages and stack traces are encrypted too, moved into a
// payload (FailureConverter).
//
// Search attributes are not payloads a codec sees: recur's hold no secrets
// (jobs.SearchAttributeKeys), and must stay plain to be queried.
package codec

import (
	"crypto/rand"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"
)

// Metadata of an encrypted payload. The names are those of Temporal's
// encryption samples, which the Web UI and tools recognize.
const (
	// MetadataEncoding is the metadata key of a payload's encoding.
	MetadataEncoding = converter.MetadataEncoding
	// EncodingEncrypted is the encoding of an encrypted payload.
	EncodingEncrypted = "binary/encrypted"
	// MetadataKeyID is the metadata key naming the key that encrypted it.
	MetadataKeyID = "encryption-key-id"
)

// Codec is a converter.PayloadCodec: Encode encrypts each payload (the
// whole payload, its metadata included) with the current key; Decode
// decrypts with the key the payload names, and passes through payloads
// that are not encrypted, so histories written before encryption was
// turned on still read.
type Codec struct {
	keys *Keys
}

var _ converter.PayloadCodec = (*Codec)(nil)

// New returns the codec of keys.
func New(keys *Keys) *Codec { return &Codec{keys: keys} }

// DataConverter is Temporal's default data converter with the codec of
// keys: what every Temporal client of recur uses, and its workers inherit.
func DataConverter(keys *Keys) converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), New(keys))
}

// FailureConverter is the failure converter of a client whose data
// converter is dc (DataConverter's): Temporal's default, made to move a
// failure's message and stack trace into a payload of dc, encrypted with
// it (EncodeCommonAttributes). Otherwise they are stored in clear, and
// they hold what targets answered. Failures written without it still
// read; the Web UI shows the encoded ones through the codec endpoint.
func FailureConverter(dc converter.DataConverter) converter.FailureConverter {
	return temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{DataConverter: dc, EncodeCommonAttributes: true})
}

// Encode encrypts payloads with the current key.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	id := c.keys.Current()
	aead, _ := c.keys.aead(id)
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if isNil(p) {
			out[i] = p
			continue
		}
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("encrypt payload: %w", err)
		}
		nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
		if _, err := rand.Read(nonce); err != nil {
			return nil, fmt.Errorf("encrypt payload: %w", err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{
				MetadataEncoding: []byte(EncodingEncrypted),
				MetadataKeyID:    []byte(id),
			},
			Data: aead.Seal(nonce, nonce, plain, nil),
		}
	}
	return out, nil
}

// isNil reports whether p is the default converter's nil: it holds
// nothing to hide, and the server reads it, in a memo upsert, as the
// deletion of the field, which an encrypted nil would not be.
func isNil(p *commonpb.Payload) bool {
	return string(p.GetMetadata()[converter.MetadataEncoding]) == converter.MetadataEncodingNil && len(p.GetData()) == 0 && len(p.GetMetadata()) == 1
}

// Decode decrypts the encrypted payloads and passes the others through.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[MetadataEncoding]) != EncodingEncrypted {
			out[i] = p
			continue
		}
		plain, err := c.open(p)
		if err != nil {
			return nil, err
		}
		out[i] = plain
	}
	return out, nil
}

// open decrypts one encrypted payload. Its errors name the key by ID and
// nothing of the key or the payload.
func (c *Codec) open(p *commonpb.Payload) (*commonpb.Payload, error) {
	idBytes, ok := p.GetMetadata()[MetadataKeyID]
	if !ok {
		return nil, fmt.Errorf("decrypt payload: no %s in its metadata", MetadataKeyID)
	}
	id := string(idBytes)
	aead, ok := c.keys.aead(id)
	if !ok {
		return nil, fmt.Errorf("decrypt payload: it was encrypted with key %q, which is not in the key file (keys: %s); add that key back to read it",
			id, joinIDs(c.keys.IDs()))
	}
	data := p.GetData()
	if len(data) < aead.NonceSize()+aead.Overhead() {
		return nil, fmt.Errorf("decrypt payload with key %q: %d bytes are too short to be encrypted", id, len(data))
	}
	plain, err := aead.Open(nil, data[:aead.NonceSize()], data[aead.NonceSize():], nil)
	if err != nil {
		return nil, fmt.Errorf("decrypt payload with key %q: authentication failed: the payload was altered, or key %q is not the key that encrypted it", id, id)
	}
	var out commonpb.Payload
	if err := proto.Unmarshal(plain, &out); err != nil {
		return nil, fmt.Errorf("decrypt payload with key %q: %w", id, err)
	}
	return &out, nil
}
