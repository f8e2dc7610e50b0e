// Command zeroclaw is the local AI-agent daemon and its clients.
package main

import (
	"context"
	"os"

	"github.com/zeroclaw/zeroclaw/internal/cli"
	"github.com/zeroclaw/zeroclaw/internal/console"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], console.OS()))
}
