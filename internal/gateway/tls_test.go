package gateway_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/daemon"
)

// pki is a CA, a server certificate for localhost and 127.0.0.1, and a
// client certificate, written as PEM files.
type pki struct {
	dir                           string
	pool                          *x509.CertPool
	serverCert, serverKey, caFile string
	client                        tls.Certificate
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	p := &pki{dir: t.TempDir(), pool: x509.NewCertPool()}
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(p.dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	now := time.Now()
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	p.pool.AddCert(ca)
	p.caFile = write("ca.pem", "CERTIFICATE", caDER)
	leaf := func(serial int64, usage x509.ExtKeyUsage, k *ecdsa.PrivateKey) []byte {
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "localhost"}, NotBefore: now.Add(-time.Hour),
			NotAfter: now.Add(time.Hour), DNSNames: []string{"localhost", "zeroclaw.test"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	sk := key()
	p.serverCert = write("server.pem", "CERTIFICATE", leaf(2, x509.ExtKeyUsageServerAuth, sk))
	skDER, _ := x509.MarshalECPrivateKey(sk)
	p.serverKey = write("server-key.pem", "EC PRIVATE KEY", skDER)
	ck := key()
	p.client = tls.Certificate{Certificate: [][]byte{leaf(3, x509.ExtKeyUsageClientAuth, ck)}, PrivateKey: ck}
	return p
}

func TestTLSAndMutualTLS(t *testing.T) {
	p := newPKI(t)
	g := start(t, func(c *config.Config, _ *daemon.Options) {
		c.Gateway.TLSCert, c.Gateway.TLSKey, c.Gateway.ClientCA = p.serverCert, p.serverKey, p.caFile
	})
	if !strings.HasPrefix(g.url, "https://") {
		t.Fatalf("gateway url %s", g.url)
	}
	withCert := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: p.pool, Certificates: []tls.Certificate{p.client}}}}
	without := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: p.pool}}}
	defer withCert.CloseIdleConnections()
	if _, err := without.Get(g.url + "/health"); err == nil {
		t.Fatal("a client without a certificate was served")
	}
	g.http = withCert
	resp, body := g.do("GET", "/health", nil, "")
	if resp.StatusCode != 200 || resp.TLS == nil {
		t.Fatalf("health over TLS: %d %s", resp.StatusCode, body)
	}
	// A name of the certificate is this gateway's Host.
	if resp, body = g.do("GET", "/health", map[string]string{"Host": "zeroclaw.test"}, ""); resp.StatusCode != 200 {
		t.Fatalf("the certificate's name as Host: %d %s", resp.StatusCode, body)
	}
	tok, _ := g.pair("tls")
	// WSS with the client certificate.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, strings.Replace(g.url, "https", "wss", 1)+"/ws", &websocket.DialOptions{
		HTTPClient: withCert, HTTPHeader: http.Header{"Authorization": {"Bearer " + tok}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if m := wsCall(t, c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`); errCode(m) != 0 {
		t.Fatal(m)
	}
	// Pairing over TLS sets a Secure cookie.
	resp, body = g.do("POST", "/pair", nil, `{"code":"`+g.code()+`","cookie":true}`)
	var pr map[string]any
	json.Unmarshal(body, &pr)
	ck := resp.Header.Get("Set-Cookie")
	if resp.StatusCode != 200 || pr["token"] != nil || !strings.Contains(ck, "HttpOnly") || !strings.Contains(ck, "Secure") || !strings.Contains(ck, "SameSite=Strict") {
		t.Fatalf("cookie pairing: %d %s %q", resp.StatusCode, body, ck)
	}
}

// A gateway reachable from other machines needs TLS, or an explicit
// acceptance of the risk.
func TestRemoteListenNeedsTLS(t *testing.T) {
	g := config.Gateway{Enabled: true, Listen: "0.0.0.0:42617"}
	err := g.Check()
	if err == nil || !strings.Contains(err.Error(), "tls_cert") || !strings.Contains(err.Error(), "allow_insecure_remote") {
		t.Fatalf("remote without TLS: %v", err)
	}
	g.AllowInsecureRemote = true
	if err := g.Check(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []config.Gateway{
		{Listen: "127.0.0.1"},
		{Listen: "127.0.0.1:99999"},
		{Listen: "127.0.0.1:1", TLSCert: "x"},
		{Listen: "127.0.0.1:1", ClientCA: "x"},
		{Listen: "127.0.0.1:1", AllowedOrigins: []string{"evil.example"}},
	} {
		if err := bad.Check(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	// The daemon refuses to start with it, and says why.
	dirs, _ := config.ResolveDirs(filepath.Join(t.TempDir(), "cfg"), func(string) string { return "" })
	cfg := config.Default(func(string) string { return "" })
	cfg.Gateway = config.Gateway{Enabled: true, Listen: "0.0.0.0:0"}
	err = daemon.Run(context.Background(), daemon.Options{Dirs: dirs, Config: cfg})
	if err == nil || !strings.Contains(err.Error(), "clear text") {
		t.Fatalf("daemon with a remote gateway without TLS: %v", err)
	}
}
