// Package browser drives a headless Chromium for tests: Debian's package
// chromium, installed with apt-get on first use when the tests run as root,
// driven over the DevTools protocol with chromedp.
package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/recurhq/recur/internal/debian"
)

// Path is where Debian's chromium package puts the browser.
const Path = "/usr/bin/chromium"

// Package is the Debian package that provides Path.
const Package = "chromium"

// installOnce makes a test binary install (or find) Chromium once; the
// lock file makes the test binaries of several packages do it one at a
// time.
var installOnce = sync.OnceValues(install)

// Executable returns the path of Chromium, installing Debian's package
// when it is missing and the tests run as root. It skips only under
// go test -short, the quick path that installs nothing: otherwise a test
// that needs a browser fails when it cannot have one.
func Executable(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: it needs Chromium")
	}
	path, err := installOnce()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	return path
}

// install returns Path, installing Debian's package when it is not there.
func install() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	if err := debian.Install(ctx, Package, func() bool { return debian.Executable(Path) }); err != nil {
		return "", err
	}
	return Path, nil
}

// Width and Height are the browser window's size, in CSS pixels.
const (
	Width  = 1280
	Height = 900
)

// Flags are the command-line switches of every Chromium the tests start.
// Without the background-networking ones Chromium keeps trying to reach
// Google's services, and on a closed network those connections are
// refused.
var Flags = []string{
	"headless", "no-sandbox", "disable-gpu", "disable-quic", "no-first-run", "no-default-browser-check",
	"disable-background-networking", "disable-component-update", "disable-sync", "disable-extensions",
	"disable-default-apps", "disable-dev-shm-usage", "mute-audio", "hide-scrollbars",
}

// New starts a headless Chromium with a fresh profile and returns the
// context of its first tab, for chromedp.Run and chromedp.Do; extra adds
// to its options (chromedp.Flag("host-resolver-rules", ...), say). The
// browser is closed when t ends.
func New(t testing.TB, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(Executable(t)),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(Width, Height),
	}
	for _, f := range Flags {
		opts = append(opts, chromedp.Flag(f, true))
	}
	opts = append(opts, extra...)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// The first Do starts the browser, bound to ctx, which has no deadline:
	// tests limit each step with a context derived from it.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// Screenshot captures the whole page as a PNG, checks that it is an
// image worth looking at, and writes it to name in a temporary directory
// of t; when the environment variable RECUR_SCREENSHOT_DIR names a
// directory, a copy goes there too. It returns the path in the temporary
// directory.
func Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	// The viewport grows to the page's height, so the whole page is drawn
	// (at most 8000 pixels of it), and is put back afterwards.
	height, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`Math.ceil(document.documentElement.scrollHeight)`))
	if err != nil {
		t.Fatalf("screenshot %s: page height: %v", name, err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(Width, min(max(height, Height), 8000))); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if rerr := chromedp.Do(ctx, chromedp.ResetViewport()); rerr != nil {
		t.Fatalf("screenshot %s: reset the viewport: %v", name, rerr)
	}
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := CheckPNG(shot); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatalf("write screenshot: %v", err)
	}
	if dir := os.Getenv("RECUR_SCREENSHOT_DIR"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatalf("screenshot dir: %v", err)
		}
		path = filepath.Join(dir, name)
		if err := os.WriteFile(path, shot, 0o644); err != nil {
			t.Fatalf("copy screenshot: %v", err)
		}
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(shot))
	return path
}

// CheckPNG reports whether data is a PNG of at least 400x300 pixels that
// shows something: a page that rendered nothing is one colour.
func CheckPNG(data []byte) error {
	if !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
		return errors.New("not a PNG")
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("decode PNG: %w", err)
	}
	b := img.Bounds()
	if b.Dx() < 400 || b.Dy() < 300 {
		return fmt.Errorf("the PNG is only %dx%d pixels", b.Dx(), b.Dy())
	}
	if n := colours(img, 16); n < 16 {
		return fmt.Errorf("the PNG has only %d colours: the page shows next to nothing", n)
	}
	return nil
}

// colours counts the distinct colours of img, up to limit.
func colours(img image.Image, limit int) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
			if len(seen) >= limit {
				return len(seen)
			}
		}
	}
	return len(seen)
}

// Shorten cuts s to n bytes, for failure messages that quote a page.
func Shorten(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
