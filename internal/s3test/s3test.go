// Package s3test starts a real S3-compatible server for tests: the Versity
// S3 gateway (github.com/versity/versitygw, installed by .ci/run with go
// install) with its POSIX backend in a temporary directory, listening on a
// free port of 127.0.0.1. Outside CI a missing versitygw skips the test; in
// CI it fails it (internal/testenv).
package s3test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"thv/internal/testenv"
)

// The gateway's one account.
const (
	AccessKey = "thvtestkey"
	SecretKey = "thvtestsecret123"
	Region    = "us-east-1"
)

// Server is a running gateway.
type Server struct {
	Endpoint string // http://127.0.0.1:PORT
	Data     string // the POSIX backend's directory: bucket B's objects are files under Data/B/
	addr     string
	bin      string
	cmd      *exec.Cmd
	log      *bytes.Buffer
	t        testing.TB
}

// Binary finds versitygw on PATH or in $(go env GOPATH)/bin.
func Binary(t testing.TB) string {
	t.Helper()
	return testenv.LookGoTool(t, "versitygw", "github.com/versity/versitygw/cmd/versitygw@v1.8.0")
}

// Start starts a gateway on a free port with an empty data directory; it
// is stopped when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{Data: t.TempDir(), bin: Binary(t), t: t}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = l.Addr().String()
	l.Close()
	s.Endpoint = "http://" + s.addr
	s.Restart()
	t.Cleanup(s.Kill)
	return s
}

// Restart starts the gateway again (after Kill) on the same port and data.
func (s *Server) Restart() {
	t := s.t
	t.Helper()
	s.log = &bytes.Buffer{}
	s.cmd = exec.Command(s.bin, "--port", s.addr, "posix", s.Data)
	s.cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+AccessKey, "ROOT_SECRET_KEY="+SecretKey)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting versitygw: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.Endpoint)
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			s.Kill()
			t.Fatalf("versitygw did not answer on %s within 30 s: %v\n%s", s.addr, err, s.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Kill stops the gateway at once (SIGKILL), by its PID.
func (s *Server) Kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
		s.cmd = nil
	}
}

// Env is the AWS environment a client needs for this server.
func (s *Server) Env() []string {
	return []string{
		"AWS_ENDPOINT_URL=" + s.Endpoint, "AWS_REGION=" + Region,
		"AWS_ACCESS_KEY_ID=" + AccessKey, "AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PROFILE=",
	}
}

// SetEnv sets Env in this process for the test.
func (s *Server) SetEnv(t testing.TB) {
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// Bucket creates a bucket and returns its name.
func (s *Server) Bucket(t testing.TB, name string) string {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background(),
		config.WithRegion(Region), config.WithBaseEndpoint(s.Endpoint),
		config.WithCredentialsProvider(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: AccessKey, SecretAccessKey: SecretKey}, nil
		})))
	if err != nil {
		t.Fatal(err)
	}
	c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &name}); err != nil {
		t.Fatalf("creating bucket %s: %v\n%s", name, err, s.log)
	}
	return name
}

// Path is the file that holds key in bucket on the POSIX backend.
func (s *Server) Path(bucket, key string) string {
	return filepath.Join(s.Data, bucket, filepath.FromSlash(key))
}

// String describes the server.
func (s *Server) String() string { return fmt.Sprintf("versitygw on %s", s.addr) }
