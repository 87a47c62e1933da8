package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"acctapi/docread"
)

// CompilePDFReader compiles the PDF reader into the compilation cache in
// dir: what the child that serve runs on a first start does.
func CompilePDFReader(ctx context.Context, dir string) error {
	r, err := docread.NewReader(ctx, docread.Options{CacheDir: dir})
	if err != nil {
		return err
	}
	return r.Close()
}

// compileInChild runs this binary with args and the cache directory after
// them (cmd's command that calls CompilePDFReader) and waits for it.
// Cancelling ctx kills it, so a stop never waits for a compile.
func compileInChild(args []string) func(ctx context.Context, dir string) error {
	return func(ctx context.Context, dir string) error {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find this program: %w", err)
		}
		child := exec.CommandContext(ctx, exe, append(args, dir)...)
		var stderr strings.Builder
		child.Stderr = &stderr
		if err := child.Run(); err != nil {
			if msg := strings.TrimSpace(stderr.String()); msg != "" {
				err = errors.Join(err, errors.New(msg))
			}
			return fmt.Errorf("compile the PDF reader in a child: %w", err)
		}
		return nil
	}
}
