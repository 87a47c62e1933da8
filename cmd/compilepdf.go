package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"acctapi/docread"
)

// compilePDFReaderCmd is the name of the hidden command serve runs to
// compile the PDF reader in a process of its own.
const compilePDFReaderCmd = "compile-pdf-reader"

// newCompilePDFReaderCmd compiles the PDF reader into a compilation cache
// and exits. serve runs it as a child on a first start: compiling PDFium
// holds some 300 MB for seconds, which this process gives back to the
// system when it ends, while the server only loads the compiled code.
func newCompilePDFReaderCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:    compilePDFReaderCmd + " --cache-dir DIR",
		Short:  "Compile the PDF reader into a cache directory (serve runs it)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := docread.NewReader(cmd.Context(), docread.Options{CacheDir: dir})
			if err != nil {
				return err
			}
			return r.Close()
		},
	}
	cmd.Flags().StringVar(&dir, "cache-dir", "", "the compilation cache to fill")
	cmd.MarkFlagRequired("cache-dir")
	return cmd
}

// compilePDFReaderInChild runs this binary's compile-pdf-reader on dir and
// waits for it; cancelling ctx kills it, so a stop never waits for a
// compile.
func compilePDFReaderInChild(ctx context.Context, dir string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this program: %w", err)
	}
	child := exec.CommandContext(ctx, exe, compilePDFReaderCmd, "--cache-dir", dir)
	var stderr strings.Builder
	child.Stderr = &stderr
	if err := child.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			err = errors.Join(err, errors.New(msg))
		}
		return fmt.Errorf("%s: %w", compilePDFReaderCmd, err)
	}
	return nil
}
