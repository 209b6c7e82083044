package store

import (
	"crypto/sha256"
	"encoding/binary"
	"maps"
	"slices"

	commonpb "go.temporal.io/api/common/v1"
)

// A list page decodes the memo of each of its jobs, a hundred of them,
// at every request (through the data converter: decryption and JSON),
// though a job's memo changes only when its workflow writes it. So the
// store keeps the values it decoded by the payload they came from: the
// same payload always decodes to the same value, and a payload written
// anew is another key, so nothing has to be invalidated. The key is a
// SHA-256 of the payload rather than its bytes: a tenant cannot make
// two payloads share it, and it keeps 32 bytes of a KiB.
//
// The values are shared by every request that reads them: what decodes
// them is copied before it changes (Job.Public, JobView.WithStatus).

// maxDecoded bounds the values kept: a job's memo gives two (its
// definition and its status), of 1 to 2 KiB each once decoded.
const maxDecoded = 32768

// decodeMemo decodes p into into through the store's data converter, or
// takes the value it decoded from the same payload before.
func decodeMemo[V any](s *Store, p *commonpb.Payload, into *V) error {
	return decodeCached(s, payloadKey(p), func() (*commonpb.Payload, error) { return p, nil }, into)
}

// decodeCached decodes the payload that load returns into into, or takes
// the value decoded before from the payload whose key (payloadKey) is key.
// load runs only when no value is kept.
func decodeCached[V any](s *Store, key string, load func() (*commonpb.Payload, error), into *V) error {
	if v, ok := s.decoded.get(key); ok {
		if v, ok := v.(V); ok {
			*into = v
			return nil
		}
	}
	p, err := load()
	if err != nil {
		return err
	}
	var v V
	if err := s.dataConverter().FromPayload(p, &v); err != nil {
		return err
	}
	s.decoded.put(key, v)
	*into = v
	return nil
}

// payloadKey is the SHA-256 of the payload's metadata and data, each
// length-prefixed so that no two payloads write the same bytes.
func payloadKey(p *commonpb.Payload) string {
	meta := p.GetMetadata()
	entries := make([]metadataEntry, 0, len(meta))
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		entries = append(entries, metadataEntry{key: []byte(k), value: meta[k]})
	}
	return keyOfPayload(entries, p.GetData())
}

// metadataEntry is one entry of a payload's metadata.
type metadataEntry struct{ key, value []byte }

// keyOfPayload is payloadKey of the payload with the metadata entries,
// sorted by key, and data.
func keyOfPayload(sorted []metadataEntry, data []byte) string {
	h := sha256.New()
	// The length prefixes share one buffer; written here, where h's type
	// is known, neither the buffer nor the digest leaves the stack.
	var n [binary.MaxVarintLen64]byte
	write := func(b []byte) {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(b)))])
		h.Write(b)
	}
	for _, e := range sorted {
		write(e.key)
		write(e.value)
	}
	write(data)
	return string(h.Sum(nil))
}
