package main

import (
	"os"

	"github.com/infra-iac/infra/cli"
)

func main() { os.Exit(cli.Main()) }
