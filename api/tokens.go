package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/recurhq/recur/jobs"
)

// minTokenLength is the shortest token accepted in clear: shorter ones are
// guessable.
const minTokenLength = 16

// StaticTokens authenticates bearer tokens from a fixed list. It keeps
// only their SHA-256 digests and compares them in constant time.
type StaticTokens struct {
	tokens []staticToken
}

type staticToken struct {
	name          string
	digest        [sha256.Size]byte
	subscriptions []string
}

// tokenFile is the JSON of a tokens file.
type tokenFile struct {
	Tokens []tokenEntry `json:"tokens"`
}

// tokenEntry is one token of a tokens file: the token itself, or (better,
// since the file then holds no usable secret) the hex SHA-256 of it.
type tokenEntry struct {
	Name          string   `json:"name"`
	Token         string   `json:"token,omitempty"`
	SHA256        string   `json:"sha256,omitempty"`
	Subscriptions []string `json:"subscriptions"`
}

// ParseTokenFile reads a tokens file:
//
//	{"tokens": [
//	  {"name": "team-a", "sha256": "<hex SHA-256 of the token>", "subscriptions": ["sub-a"]},
//	  {"name": "ops", "token": "<the token>", "subscriptions": ["*"]}]}
func ParseTokenFile(data []byte) (*StaticTokens, error) {
	var f tokenFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("read tokens file: %w", err)
	}
	st := &StaticTokens{}
	for i, e := range f.Tokens {
		if err := st.add(e); err != nil {
			return nil, fmt.Errorf("tokens[%d]: %w", i, err)
		}
	}
	return st, nil
}

// ParseTokenList reads tokens in the form "token=sub1,sub2;token2=*"
// (RECUR_API_TOKENS). They are named env#1, env#2, ... in logs.
func ParseTokenList(list string) (*StaticTokens, error) {
	st := &StaticTokens{}
	for i, item := range strings.Split(list, ";") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name := "env#" + strconv.Itoa(i+1)
		// Subscriptions hold no "=", a token may (base64 padding).
		eq := strings.LastIndex(item, "=")
		if eq < 0 {
			return nil, fmt.Errorf("%s: want token=subscription,subscription", name)
		}
		e := tokenEntry{Name: name, Token: strings.TrimSpace(item[:eq])}
		for sub := range strings.SplitSeq(item[eq+1:], ",") {
			e.Subscriptions = append(e.Subscriptions, strings.TrimSpace(sub))
		}
		if err := st.add(e); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return st, nil
}

// Merge returns the tokens of st and other together, refusing names or
// tokens that appear in both.
func (st *StaticTokens) Merge(other *StaticTokens) (*StaticTokens, error) {
	out := &StaticTokens{tokens: append([]staticToken(nil), st.tokens...)}
	for _, t := range other.tokens {
		if err := out.append(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Len is the number of tokens.
func (st *StaticTokens) Len() int { return len(st.tokens) }

func (st *StaticTokens) add(e tokenEntry) error {
	t := staticToken{name: e.Name, subscriptions: e.Subscriptions}
	if e.Name == "" {
		return errors.New("name is required (logs name the token by it)")
	}
	switch {
	case e.Token != "" && e.SHA256 != "":
		return errors.New("give token or sha256, not both")
	case e.Token != "":
		if len(e.Token) < minTokenLength {
			return fmt.Errorf("token is shorter than %d characters", minTokenLength)
		}
		t.digest = sha256.Sum256([]byte(e.Token))
	case e.SHA256 != "":
		d, err := hex.DecodeString(e.SHA256)
		if err != nil || len(d) != sha256.Size {
			return errors.New("sha256 must be 64 hex digits, the SHA-256 of the token")
		}
		copy(t.digest[:], d)
	default:
		return errors.New("token or sha256 is required")
	}
	if len(e.Subscriptions) == 0 {
		return errors.New(`subscriptions is required: subscription IDs, or "*" for all`)
	}
	for _, sub := range e.Subscriptions {
		if sub == AllSubscriptions {
			continue
		}
		// Stand-ins let Key.Validate check the subscription alone.
		if err := (jobs.Key{Subscription: sub, ResourceGroup: "x", Collection: "x"}).Validate(); err != nil {
			return fmt.Errorf("subscription %q: %w", sub, err)
		}
	}
	return st.append(t)
}

func (st *StaticTokens) append(t staticToken) error {
	for _, have := range st.tokens {
		if have.name == t.name {
			return fmt.Errorf("token name %q is used twice", t.name)
		}
		if have.digest == t.digest {
			return fmt.Errorf("tokens %q and %q are the same token", have.name, t.name)
		}
	}
	st.tokens = append(st.tokens, t)
	return nil
}

// Authenticate implements Authenticator. It compares the token's digest
// with every known digest, without stopping at a match, so the time it
// takes says nothing about which token matched or how closely.
func (st *StaticTokens) Authenticate(_ context.Context, token string) (Principal, error) {
	digest := sha256.Sum256([]byte(token))
	found := -1
	for i := range st.tokens {
		if subtle.ConstantTimeCompare(digest[:], st.tokens[i].digest[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Principal{}, errors.New("unknown static token")
	}
	t := st.tokens[found]
	return Principal{Name: t.name, Subscriptions: t.subscriptions}, nil
}
