package api

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
// API keeps the values it decoded by the payload they came from: the
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

// decodeMemo decodes p into into through the API's data converter, or
// takes the value it decoded from the same payload before.
func decodeMemo[V any](s *Server, p *commonpb.Payload, into *V) error {
	key := payloadKey(p)
	if v, ok := s.decoded.get(key); ok {
		if v, ok := v.(V); ok {
			*into = v
			return nil
		}
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
	h := sha256.New()
	// The length prefixes share one buffer; written here, where h's type
	// is known, neither the buffer nor the digest leaves the stack.
	var n [binary.MaxVarintLen64]byte
	write := func(b []byte) {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(b)))])
		h.Write(b)
	}
	meta := p.GetMetadata()
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		write([]byte(k))
		write(meta[k])
	}
	write(p.GetData())
	return string(h.Sum(nil))
}
