package activities

import (
	"cmp"
	"net/url"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// redacted stands for a secret in what history keeps.
const redacted = "[redacted]"

// redactSecrets replaces in s every secret, as it is, URL-encoded (query
// or path), and each of these as a JSON encoder may write it in a string:
// any character as itself or escaped (\", \\, \/, \n..., \u00e9 or
// \u00E9, a surrogate pair beyond the Basic Multilingual Plane). Targets
// echo what they got in JSON more often than not, and every encoder
// escapes in its own way (Go writes < as \u003c, PHP / as \/, Python é as
// \u00e9, .NET " as \u0022).
func redactSecrets(s string, secrets []string) string {
	forms := secretForms(secrets)
	if len(forms) == 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		n := 0
		for _, form := range forms {
			if n = escapedPrefix(s[i:], form); n > 0 {
				break
			}
		}
		if n > 0 {
			b.WriteString(redacted)
			i += n
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// secretForms returns the secrets and their URL-encodings, without
// repeats or empty ones, the longest first: where two match, the longer
// is redacted whole.
func secretForms(secrets []string) []string {
	var forms []string
	for _, s := range secrets {
		if s == "" {
			continue
		}
		for _, f := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
			if !slices.Contains(forms, f) {
				forms = append(forms, f)
			}
		}
	}
	slices.SortStableFunc(forms, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return forms
}

// escapedPrefix returns how many bytes at the start of s spell secret,
// each character as itself or JSON-escaped; 0 when s does not start with
// it. A secret that is no valid UTF-8 matches only as it is. A backslash
// may spell itself or begin an escape, so the spelling is followed along
// every way it can go (the offsets of s where the secret's prefix may
// end), and the longest is taken: an escape is redacted whole.
func escapedPrefix(s, secret string) int {
	if strings.HasPrefix(s, secret) {
		return len(secret)
	}
	if !utf8.ValidString(secret) || s == "" || s[0] != '\\' && !strings.HasPrefix(secret, s[:1]) {
		return 0 // the common case, quickly
	}
	ends := []int{0}
	for _, r := range secret {
		var next []int
		for _, at := range ends {
			lengths, n := escapedRune(s[at:], r)
			for _, l := range lengths[:n] {
				if !slices.Contains(next, at+l) {
					next = append(next, at+l)
				}
			}
		}
		if len(next) == 0 {
			return 0
		}
		ends = next
	}
	return slices.Max(ends)
}

// jsonShortEscapes are the two-character escapes of JSON strings.
var jsonShortEscapes = map[rune]byte{'"': '"', '\\': '\\', '/': '/', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// escapedRune returns the lengths of the spellings of r at the start of
// s, as itself or JSON-escaped: n of them.
func escapedRune(s string, r rune) (lengths [2]int, n int) {
	if l := utf8.RuneLen(r); l > 0 && strings.HasPrefix(s, string(r)) {
		lengths[n], n = l, n+1
	}
	if len(s) < 2 || s[0] != '\\' {
		return lengths, n
	}
	if c, ok := jsonShortEscapes[r]; ok && s[1] == c {
		lengths[n], n = 2, n+1
		return lengths, n
	}
	u, ok := hexEscape(s)
	if ok && u == r {
		lengths[n], n = 6, n+1
		return lengths, n
	}
	if hi, lo := utf16.EncodeRune(r); ok && hi == u {
		if l, ok := hexEscape(s[6:]); ok && l == lo {
			lengths[n], n = 12, n+1
		}
	}
	return lengths, n
}

// hexEscape reads a \uXXXX escape (hex digits in either case) at the
// start of s.
func hexEscape(s string) (rune, bool) {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[2:6]) {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
