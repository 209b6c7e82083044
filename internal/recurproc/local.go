package recurproc

import (
	"errors"
	"log"
	"net"
	"net/http"
	"os"
	"time"
)

// WorkDir makes the temporary directory of one tool run (the binary, its
// data, its log); remove deletes it unless keep, which logs where it is.
func WorkDir(prefix string, keep bool) (dir string, remove func(), err error) {
	dir, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	if keep {
		log.Printf("keeping %s", dir)
		return dir, func() {}, nil
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}

// serveLocal serves h on a free port of 127.0.0.1: it returns the
// server's URL and a function that closes it.
func serveLocal(h http.HandlerFunc) (url string, closeFn func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Printf("sink stopped: %v", err)
		}
	}()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}
