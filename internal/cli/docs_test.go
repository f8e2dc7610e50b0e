package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// docs/cli.md is generated from the command tree and must match it.
func TestCLIDocs(t *testing.T) {
	var b bytes.Buffer
	WriteDocs(&b)
	path := filepath.Join("..", "..", "docs", "cli.md")
	if os.Getenv("ZEROCLAW_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(have, b.Bytes()) {
		t.Fatalf("docs/cli.md is not what the command tree says (%v); run ZEROCLAW_UPDATE_DOCS=1 go test ./internal/cli -run TestCLIDocs", err)
	}
}
