package sandbox

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// A sandbox lives for one test run or one dev session; a year outlasts both, and an hour of
// backdating covers a clock that steps while the sandbox starts.
const (
	kubeCertLifetime = 365 * 24 * time.Hour
	kubeCertBackdate = time.Hour
)

// kubePKI is the sandbox cluster's credentials: made fresh for every sandbox, kept in its folder,
// trusted by nothing else.
type kubePKI struct {
	caFile     string // CA certificate, PEM: the apiserver's --client-ca-file and every client's root
	certFile   string // apiserver serving certificate for 127.0.0.1 and localhost
	keyFile    string
	saKeyFile  string // RSA private key that signs service-account tokens
	saPubFile  string // its public half, which verifies them
	tokenFile  string // static token file naming the admin
	caPEM      []byte
	adminToken string
}

// writeKubePKI makes a CA, a serving certificate, a service-account key pair and an admin token,
// and writes them under dir.
func writeKubePKI(dir string) (kubePKI, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return kubePKI{}, fmt.Errorf("making folder for the cluster's keys: %w", err)
	}
	p := kubePKI{
		caFile:    filepath.Join(dir, "ca.crt"),
		certFile:  filepath.Join(dir, "apiserver.crt"),
		keyFile:   filepath.Join(dir, "apiserver.key"),
		saKeyFile: filepath.Join(dir, "sa.key"),
		saPubFile: filepath.Join(dir, "sa.pub"),
		tokenFile: filepath.Join(dir, "tokens.csv"),
	}
	now := time.Now()
	ca, caKey, err := makeSandboxCA(now)
	if err != nil {
		return kubePKI{}, err
	}
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})
	certPEM, keyPEM, err := makeServingCert(now, ca, caKey)
	if err != nil {
		return kubePKI{}, err
	}
	saKeyPEM, saPubPEM, err := makeServiceAccountKey()
	if err != nil {
		return kubePKI{}, err
	}
	if p.adminToken, err = makeAdminToken(); err != nil {
		return kubePKI{}, err
	}

	files := []struct {
		path string
		data []byte
	}{
		{p.caFile, p.caPEM},
		{p.certFile, certPEM},
		{p.keyFile, keyPEM},
		{p.saKeyFile, saKeyPEM},
		{p.saPubFile, saPubPEM},
		// token,user,uid,groups: system:masters is bound to cluster-admin by the apiserver itself.
		{p.tokenFile, []byte(p.adminToken + ",admin,admin,system:masters\n")},
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, f.data, 0o600); err != nil {
			return kubePKI{}, fmt.Errorf("writing %s: %w", f.path, err)
		}
	}
	return p, nil
}

// makeSandboxCA makes the CA the apiserver and every client trust, valid from now (backdated) for
// kubeCertLifetime. ECDSA P-256 keys take microseconds to make; RSA would add a noticeable pause
// to every start.
func makeSandboxCA(now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("making the sandbox CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "tidegate-sandbox-ca"},
		NotBefore:             now.Add(-kubeCertBackdate),
		NotAfter:              now.Add(kubeCertLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the sandbox CA: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, fmt.Errorf("reading back the sandbox CA: %w", err)
	}
	return caCert, caKey, nil
}

// makeServingCert makes the apiserver's serving certificate for 127.0.0.1 and localhost, signed
// by ca, and its key, both PEM.
func makeServingCert(now time.Time, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (certPEM, keyPEM []byte, err error) {
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("making the apiserver key: %w", err)
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-kubeCertBackdate),
		NotAfter:     now.Add(kubeCertLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the apiserver certificate: %w", err)
	}
	srvKeyDER, err := x509.MarshalPKCS8PrivateKey(srvKey)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the apiserver key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: srvKeyDER}), nil
}

// makeServiceAccountKey makes the key pair that signs and verifies service-account tokens, both
// PEM. The tokens are RS256 JWTs; 2048 bits is what kubeadm makes for sa.key.
func makeServiceAccountKey() (keyPEM, pubPEM []byte, err error) {
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, fmt.Errorf("making the service-account key: %w", err)
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the service-account public key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)}),
		pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPubDER}), nil
}

// makeAdminToken makes the static token that names the admin: 32 random bytes, hex, a token
// nobody guesses, though only loopback can reach the apiserver.
func makeAdminToken() (string, error) {
	tok := make([]byte, 32)
	if _, err := rand.Read(tok); err != nil {
		return "", fmt.Errorf("making the admin token: %w", err)
	}
	return hex.EncodeToString(tok), nil
}

// writeKubeconfig writes an admin kubeconfig for server: the sandbox's tests, tools and its own
// controllers all use it.
func writeKubeconfig(path, server string, p kubePKI) error {
	const name = "tidegate-sandbox"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: p.caPEM}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: p.adminToken}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
	cfg.CurrentContext = name
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing the sandbox kubeconfig: %w", err)
	}
	return nil
}
