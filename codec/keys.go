package codec

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"
)

// KeySize is the size of an encryption key: AES-256.
const KeySize = 32

// maxKeyIDLen bounds a key ID, which travels in every payload's metadata.
const maxKeyIDLen = 64

// Keys is a set of AES-256 keys by ID, one of them current. The current
// key encrypts; every key decrypts, so that payloads written before a
// rotation stay readable as long as their key is kept. Keys is immutable.
type Keys struct {
	current string
	raw     map[string][]byte
	aeads   map[string]cipher.AEAD
}

// NewKeys returns the key set of keys (each KeySize bytes) with current
// as the key that encrypts.
func NewKeys(current string, keys map[string][]byte) (*Keys, error) {
	if len(keys) == 0 {
		return nil, errors.New("no keys")
	}
	if _, ok := keys[current]; !ok {
		return nil, fmt.Errorf("current key %q is not among the keys (%s)", current, joinIDs(slices.Sorted(maps.Keys(keys))))
	}
	k := &Keys{current: current, raw: make(map[string][]byte, len(keys)), aeads: make(map[string]cipher.AEAD, len(keys))}
	for id, key := range keys {
		if err := checkKeyID(id); err != nil {
			return nil, err
		}
		if len(key) != KeySize {
			return nil, fmt.Errorf("key %q is %d bytes, want %d (AES-256)", id, len(key), KeySize)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", id, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", id, err)
		}
		k.raw[id], k.aeads[id] = bytes.Clone(key), aead
	}
	return k, nil
}

// checkKeyID accepts IDs of letters, digits, '.', '_' and '-': they are
// written to payload metadata and named in errors and logs.
func checkKeyID(id string) error {
	if id == "" || len(id) > maxKeyIDLen {
		return fmt.Errorf("key ID %q: want 1 to %d characters", id, maxKeyIDLen)
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("key ID %q: only letters, digits, '.', '_' and '-' are allowed", id)
		}
	}
	return nil
}

// Current is the ID of the key that encrypts.
func (k *Keys) Current() string { return k.current }

// IDs are the IDs of all keys, sorted.
func (k *Keys) IDs() []string { return slices.Sorted(maps.Keys(k.raw)) }

// aead returns the cipher of key id.
func (k *Keys) aead(id string) (cipher.AEAD, bool) {
	a, ok := k.aeads[id]
	return a, ok
}

// String names the keys by ID only, so that printing a Keys by mistake
// never shows key material.
// Its receiver is a value so that a dereferenced Keys prints the same.
func (k Keys) String() string {
	return fmt.Sprintf("codec.Keys{current: %s, keys: %s}", k.current, joinIDs(slices.Sorted(maps.Keys(k.raw))))
}

// GoString is String, for %#v.
func (k Keys) GoString() string { return k.String() }

// Generate returns a key set of one fresh random key, current.
func Generate() (*Keys, error) {
	return (&Keys{}).withNewKey(true)
}

// WithCurrent returns k with key id as the current key.
func (k *Keys) WithCurrent(id string) (*Keys, error) { return NewKeys(id, k.raw) }

// WithNewKey returns k plus a fresh random key, which becomes the current
// key if makeCurrent is set; the old keys stay, for decryption.
func (k *Keys) WithNewKey(makeCurrent bool) (*Keys, error) { return k.withNewKey(makeCurrent) }

func (k *Keys) withNewKey(makeCurrent bool) (*Keys, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	id, err := newKeyID()
	if err != nil {
		return nil, err
	}
	keys := maps.Clone(k.raw)
	if keys == nil {
		keys = map[string][]byte{}
	}
	keys[id] = key
	current := k.current
	if makeCurrent || current == "" {
		current = id
	}
	return NewKeys(current, keys)
}

// newKeyID is the date of the key's creation and a random suffix, so that
// IDs sort by age and two keys made on the same day differ.
func newKeyID() (string, error) {
	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		return "", fmt.Errorf("generate key ID: %w", err)
	}
	return time.Now().UTC().Format("2006-01-02") + "-" + hex.EncodeToString(suffix), nil
}

// keyFile is the JSON of a key file:
//
//	{"current": "2026-11-02-1a2b3c4d", "keys": {"2026-11-02-1a2b3c4d": "<base64 of 32 bytes>", ...}}
type keyFile struct {
	Current string            `json:"current"`
	Keys    map[string]string `json:"keys"`
}

// MarshalJSON writes the key file's JSON, key material included: it is
// for writing key files, never for logs.
func (k *Keys) MarshalJSON() ([]byte, error) {
	f := keyFile{Current: k.current, Keys: make(map[string]string, len(k.raw))}
	for id, key := range k.raw {
		f.Keys[id] = base64.StdEncoding.EncodeToString(key)
	}
	return json.MarshalIndent(f, "", "  ")
}

// Parse reads a key file's JSON. Its errors never quote key material.
func Parse(data []byte) (*Keys, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f keyFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf(`want {"current": "<key ID>", "keys": {"<key ID>": "<base64 of %d bytes>"}}: %w`, KeySize, err)
	}
	keys := make(map[string][]byte, len(f.Keys))
	for id, s := range f.Keys {
		key, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("key %q is not standard base64: %w", id, err)
		}
		keys[id] = key
	}
	return NewKeys(f.Current, keys)
}

// Load reads the key file at path. The file must be readable by its owner
// only (mode 0600 or 0400): it holds the keys to every secret recur keeps.
func Load(path string) (*Keys, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("encryption key file: %w", err)
	}
	if err := checkMode(path, info); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("encryption key file: %w", err)
	}
	k, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("encryption key file %s: %w", path, err)
	}
	return k, nil
}

// checkMode refuses a key file that its group or others may access.
// Windows has no such mode bits; there the file's ACL is the operator's.
func checkMode(path string, info fs.FileInfo) error {
	if !info.Mode().IsRegular() {
		return fmt.Errorf("encryption key file %s is not a regular file", path)
	}
	if runtime.GOOS != "windows" && info.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("encryption key file %s has mode %04o: it must be readable by its owner only (chmod 600 %s)",
			path, info.Mode().Perm(), path)
	}
	return nil
}

// LoadOrCreate loads the key file at path, or creates it (mode 0600, and
// its directory 0700 if missing) with one fresh key; created says which.
// It is for development: in production the key file is provisioned, and
// kept, by the operator.
func LoadOrCreate(path string) (k *Keys, created bool, err error) {
	k, err = Load(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, false, err
	}
	k, err = Generate()
	if err != nil {
		return nil, false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("encryption key file: %w", err)
	}
	if err := Create(path, k); errors.Is(err, fs.ErrExist) {
		// Another process created it first: use that one.
		k, err = Load(path)
		return k, false, err
	} else if err != nil {
		return nil, false, err
	}
	return k, true, nil
}

// Create writes k to a new key file at path, mode 0600; it fails if the
// file exists.
func Create(path string, k *Keys) error {
	data, err := k.MarshalJSON()
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create encryption key file: %w", err)
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("write encryption key file %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("write encryption key file %s: %w", path, err)
	}
	return f.Close()
}

// Replace writes k over the key file at path atomically (a new file of
// mode 0600 renamed over the old one), so that a crash never leaves a key
// file without the keys old payloads need.
func Replace(path string, k *Keys) error {
	tmp := fmt.Sprintf("%s.tmp-%d", path, os.Getpid())
	if err := Create(tmp, k); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("replace encryption key file: %w", err)
	}
	return nil
}

func joinIDs(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	b, _ := json.Marshal(ids)
	return string(b)
}
