// Command acctapi serves the accounting collaboration API.
package main

import (
	"os"

	"acctapi/cmd"
)

func main() {
	os.Exit(cmd.Execute(os.Args[1:], os.Stdout, os.Stderr))
}
