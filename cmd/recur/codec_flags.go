package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"

	"github.com/recurhq/recur/codec"
	"github.com/recurhq/recur/metrics"
)

// devKeyFile is the key file `recur dev` creates in its data directory.
const devKeyFile = "encryption-keys.json"

// encryption are the flags of payload encryption: the key file, and the
// codec endpoint the Web UI decodes through.
type encryption struct {
	keyFile  string
	insecure bool
	// endpoint serves /codec on the API; origins are the Web UIs allowed
	// to call it from a browser.
	endpoint bool
	origins  string
	// keys are the keys load read; nil with --insecure-no-encryption.
	keys *codec.Keys
}

func (e *encryption) register(fs *flag.FlagSet, withAPI bool, envs *envDefaults) {
	fs.StringVar(&e.keyFile, "encryption-key-file", env("RECUR_ENCRYPTION_KEY_FILE", ""),
		"JSON `file` of the keys that encrypt what recur writes to Temporal, mode 0600; `recur keygen FILE` makes one. "+
			"recur dev: default DATA-DIR/"+devKeyFile+", created on first start (RECUR_ENCRYPTION_KEY_FILE)")
	fs.BoolVar(&e.insecure, "insecure-no-encryption", envs.bool("RECUR_INSECURE_NO_ENCRYPTION", false),
		"write payloads, secrets included, to Temporal in clear (RECUR_INSECURE_NO_ENCRYPTION=true)")
	if withAPI {
		fs.BoolVar(&e.endpoint, "codec-endpoint", envs.bool("RECUR_CODEC_ENDPOINT", true),
			"serve Temporal's remote codec at /codec/ on the API, for operators' Web UI and CLI (RECUR_CODEC_ENDPOINT)")
		fs.StringVar(&e.origins, "codec-cors-origins", env("RECUR_CODEC_CORS_ORIGINS", ""),
			"comma-separated `origins` of Web UIs that may call /codec/ from a browser, e.g. https://temporal-ui.example.com; "+
				"recur dev: its own UI (RECUR_CODEC_CORS_ORIGINS)")
	}
}

// load reads the keys. dataDir is recur dev's data directory, whose key
// file is created on first start; "" for the cluster roles, where a key
// file is required unless --insecure-no-encryption says otherwise.
func (e *encryption) load(dataDir string, log *slog.Logger) error {
	switch {
	case e.insecure && e.keyFile != "":
		return errors.New("--encryption-key-file and --insecure-no-encryption exclude each other")
	case e.insecure:
		log.Warn("ENCRYPTION IS OFF (--insecure-no-encryption): job definitions, SAS tokens, passwords and keys are written to Temporal's database and histories in clear, " +
			"readable by anyone with access to either; configure --encryption-key-file")
		return nil
	case e.keyFile != "":
		k, err := codec.Load(e.keyFile)
		if err != nil {
			return err
		}
		e.keys = k
	case dataDir == "":
		return errors.New("--encryption-key-file (RECUR_ENCRYPTION_KEY_FILE) is required: it encrypts the secrets of jobs in Temporal's database and histories. " +
			"Create one with `recur keygen FILE` and give every recur process of the cluster the same file, " +
			"or pass --insecure-no-encryption to write them in clear")
	default:
		path := filepath.Join(dataDir, devKeyFile)
		k, created, err := codec.LoadOrCreate(path)
		if err != nil {
			return err
		}
		if created {
			log.Info("created the encryption key file; keep it with the data directory: without it the jobs stored cannot be read", "path", path)
		}
		e.keyFile, e.keys = path, k
	}
	log.Info("payloads encrypted", "keyFile", e.keyFile, "currentKey", e.keys.Current(), "keys", len(e.keys.IDs()))
	return nil
}

// dataConverter is the converter of recur's Temporal clients: nil, the
// SDK's default, without keys.
func (e *encryption) dataConverter() converter.DataConverter {
	if e.keys == nil {
		return nil
	}
	return codec.DataConverter(e.keys)
}

// roles returns r with the converter and codec endpoint. uiAddr is the
// embedded Web UI's URL (recur dev), allowed as an origin unless
// --codec-cors-origins says otherwise.
func (e *encryption) roles(r roles, uiAddr string) roles {
	r.converter = e.dataConverter()
	if e.keys == nil || !e.endpoint {
		return r
	}
	var origins []string
	for o := range strings.SplitSeq(e.origins, ",") {
		if o = strings.TrimSuffix(strings.TrimSpace(o), "/"); o != "" {
			origins = append(origins, o)
		}
	}
	if len(origins) == 0 && uiAddr != "" {
		origins = append(origins, uiAddr)
		if u, err := url.Parse(uiAddr); err == nil && u.Hostname() == "127.0.0.1" {
			origins = append(origins, u.Scheme+"://localhost:"+u.Port())
		}
	}
	r.codec, r.codecOrigins = codec.Handler(e.keys, origins...), origins
	return r
}

// uiCodecURL is the codec endpoint's URL for the embedded Web UI: the
// API's address as a browser on this machine reaches it, or "" without
// an endpoint.
func (e *encryption) uiCodecURL(ln net.Listener, https bool) string {
	if e.keys == nil || !e.endpoint {
		return ""
	}
	host, port, err := net.SplitHostPort(ln.Addr().String())
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	scheme := "http"
	if https {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/codec"
}

// plainClient is a client on c's connection with Temporal's default
// converter, for the workflows Workflow actions start: their workers
// read their input without recur's keys.
func plainClient(c client.Client, namespace string, set *metrics.Set, log *slog.Logger) (client.Client, error) {
	pc, err := client.NewClientFromExisting(c, client.Options{
		Namespace:      namespace,
		MetricsHandler: set.Temporal,
		Logger:         sdklog.NewStructuredLogger(log.With("component", "temporal-client")),
	})
	if err != nil {
		return nil, fmt.Errorf("client for Workflow actions: %w", err)
	}
	return pc, nil
}

// runKeygen is `recur keygen`: it makes a key file, or adds a key to one.
func runKeygen(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("keygen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage:
  recur keygen FILE           create FILE (mode 0600) with one new key
  recur keygen --rotate FILE  add a new key to FILE and make it current; old keys stay, to read old payloads
  recur keygen --add FILE     add a new key to FILE, not yet current (to give every process a key before any uses it)
  recur keygen                print a new key file on stdout

Each prints the new key's ID (with FILE) or the key file (without).
`)
	}
	rotate := fs.Bool("rotate", false, "add a new current key to FILE")
	add := fs.Bool("add", false, "add a new key to FILE, not current")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 1 || (*rotate || *add) && fs.NArg() == 0 || *rotate && *add {
		fs.Usage()
		return 2
	}
	id, err := keygen(fs.Arg(0), *rotate, *add, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "recur keygen: %v\n", err)
		return 1
	}
	if id != "" {
		fmt.Fprintln(stdout, id)
	}
	return 0
}

// keygen does runKeygen's work and returns the new key's ID when it
// wrote a file.
func keygen(path string, rotate, add bool, stdout io.Writer) (string, error) {
	if path == "" {
		k, err := codec.Generate()
		if err != nil {
			return "", err
		}
		data, err := k.MarshalJSON()
		if err != nil {
			return "", err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", data)
		return "", err
	}
	if !rotate && !add {
		k, err := codec.Generate()
		if err != nil {
			return "", err
		}
		return k.Current(), codec.Create(path, k)
	}
	old, err := codec.Load(path)
	if err != nil {
		return "", err
	}
	k, err := old.WithNewKey(rotate)
	if err != nil {
		return "", err
	}
	if err := codec.Replace(path, k); err != nil {
		return "", err
	}
	for _, id := range k.IDs() {
		if !slices.Contains(old.IDs(), id) {
			return id, nil
		}
	}
	return "", nil
}
