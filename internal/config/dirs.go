// Package config resolves zeroclaw's directories and endpoint and loads
// config.toml, with built-in defaults when there is no file.
package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
)

// Dirs are the resolved locations of one daemon instance.
type Dirs struct {
	ConfigDir string // holds config.toml
	DataDir   string // sessions, uploads, the socket
	Endpoint  string // socket path (Unix) or pipe name (Windows)
}

// ConfigFile returns the path of config.toml.
func (d Dirs) ConfigFile() string { return filepath.Join(d.ConfigDir, "config.toml") }

// ResolveDirs applies the protocol's precedence: flagConfigDir, then
// ZEROCLAW_CONFIG_DIR, then ~/.zeroclaw; ZEROCLAW_DATA_DIR, else
// <config>/data; ZEROCLAW_SOCKET, else the platform default. getenv is
// os.Getenv in production.
func ResolveDirs(flagConfigDir string, getenv func(string) string) (Dirs, error) {
	cfg := flagConfigDir
	if cfg == "" {
		cfg = getenv("ZEROCLAW_CONFIG_DIR")
	}
	if cfg == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return Dirs{}, errors.New("cannot find the home directory; set ZEROCLAW_CONFIG_DIR or pass --config-dir")
		}
		cfg = filepath.Join(home, ".zeroclaw")
	}
	cfg, err := filepath.Abs(cfg)
	if err != nil {
		return Dirs{}, err
	}
	data := getenv("ZEROCLAW_DATA_DIR")
	if data == "" {
		data = filepath.Join(cfg, "data")
	}
	if data, err = filepath.Abs(data); err != nil {
		return Dirs{}, err
	}
	d := Dirs{ConfigDir: cfg, DataDir: data, Endpoint: getenv("ZEROCLAW_SOCKET")}
	if d.Endpoint == "" {
		d.Endpoint = DefaultEndpoint(runtime.GOOS, data)
	}
	return d, nil
}

// DefaultEndpoint is <data>/daemon.sock, or on Windows the pipe
// \\.\pipe\zeroclaw-<h>, h being the first 16 hex digits of SHA-256 of the
// cleaned absolute data dir.
func DefaultEndpoint(goos, dataDir string) string {
	if goos == "windows" {
		return PipeName(dataDir)
	}
	return filepath.Join(dataDir, "daemon.sock")
}

// PipeName returns the Windows pipe name for a data dir.
func PipeName(dataDir string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(dataDir)))
	return `\\.\pipe\zeroclaw-` + hex.EncodeToString(sum[:])[:16]
}
