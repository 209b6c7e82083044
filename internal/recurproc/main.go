package recurproc

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"
)

// Main is the shape of a bench command's main once its flags are read:
// log lines stamped with the time and prefixed with name, run under a
// context that SIGINT or SIGTERM cancels, and exit status 1 with the
// error run returns.
func Main(name string, run func(context.Context) error) {
	log.SetFlags(log.Ltime)
	log.SetPrefix(name + ": ")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		log.Printf("error: %v", err)
		os.Exit(1)
	}
}
