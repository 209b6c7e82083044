package browser

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// page renders its content from script after a delay, as a single-page
// application does once its API answers.
const page = `<!doctype html><title>late</title><body style="background:#fff">
<main id="app">loading</main>
<script>setTimeout(() => {
  const ul = document.createElement('ul');
  for (const c of ['red','green','blue','orange']) {
    const li = document.createElement('li');
    li.textContent = c; li.className = 'item'; li.style.background = c; li.style.height = '40px';
    ul.append(li);
  }
  document.getElementById('app').replaceChildren(ul);
}, 500);</script>`

func TestChromiumWaitsForScriptRenderedContent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(srv.Close)
	ctx := New(t)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL),
		chromedp.WaitVisible(chromedp.CSS("li.item"))))
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#app")))
	require.NoError(t, err)
	require.Equal(t, "red\ngreen\nblue\norange", text)
	shot := Screenshot(t, ctx, "late.png")
	data, err := os.ReadFile(shot)
	require.NoError(t, err)
	require.NoError(t, CheckPNG(data))
}

func TestCheckPNGRefusesBlankImages(t *testing.T) {
	blank := image.NewRGBA(image.Rect(0, 0, 800, 600))
	for i := range blank.Pix {
		blank.Pix[i] = 0xff
	}
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, blank))
	require.ErrorContains(t, CheckPNG(buf.Bytes()), "only 1 colours")

	for i := range 40 {
		blank.Set(i*10, i*10, color.RGBA{uint8(i * 6), 0, 0, 0xff})
	}
	buf.Reset()
	require.NoError(t, png.Encode(&buf, blank))
	require.NoError(t, CheckPNG(buf.Bytes()))
	require.ErrorContains(t, CheckPNG([]byte("GIF89a")), "not a PNG")
}
