package cmd

import (
	"github.com/spf13/cobra"

	"acctapi/server"
)

// compilePDFReaderArgs make this binary compile the PDF reader into the
// directory given after them: serve runs it as a child on a first start, so
// that the compile's 300 MB go back to the system when the child exits.
var compilePDFReaderArgs = []string{"compile-pdf-reader", "--cache-dir"}

func newCompilePDFReaderCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:    "compile-pdf-reader --cache-dir DIR",
		Short:  "Compile the PDF reader into a cache directory (serve runs it)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE:   func(cmd *cobra.Command, _ []string) error { return server.CompilePDFReader(cmd.Context(), dir) },
	}
	cmd.Flags().StringVar(&dir, "cache-dir", "", "the compilation cache to fill")
	cmd.MarkFlagRequired("cache-dir")
	return cmd
}
