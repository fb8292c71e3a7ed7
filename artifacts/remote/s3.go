package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// s3Backend is a remote in an S3 bucket of any S3-compatible service. The
// endpoint, region and credentials come from the standard AWS environment,
// as for the AWS CLI (AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY, AWS_PROFILE and ~/.aws/config). A custom endpoint
// (MinIO, Ceph, Versity, a cloud other than AWS) is addressed path-style,
// which every S3-compatible server understands. THV_REMOTE_ANONYMOUS=1
// sends unsigned requests, for a public-read bucket.
type s3Backend struct {
	url, bucket, prefix string
	client              *s3.Client
}

func newS3(ctx context.Context, rawURL, bucket, prefix string) (*s3Backend, error) {
	// Retries are retry.go's (one policy, one error naming the URL), so
	// the SDK makes a single attempt.
	opts := []func(*config.LoadOptions) error{config.WithRetryMaxAttempts(1)}
	if anon, _ := strconv.ParseBool(os.Getenv("THV_REMOTE_ANONYMOUS")); anon {
		// A public-read bucket without credentials: what a CI job of a
		// pull request from a fork, which gets no secrets, can read.
		opts = append(opts, config.WithCredentialsProvider(aws.AnonymousCredentials{}))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("remote %s: reading the AWS configuration: %w", rawURL, err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1" // S3-compatible servers need one for signing; AWS_REGION overrides
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if o.BaseEndpoint != nil {
			o.UsePathStyle = true
		}
		// Checksums only where the API requires them: not every
		// S3-compatible server implements the newer ones, and every
		// download is re-hashed against its SHA-256 name anyway.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return &s3Backend{url: rawURL, bucket: bucket, prefix: prefix, client: client}, nil
}

func (b *s3Backend) String() string { return b.url }

func (b *s3Backend) key(name string) string {
	if b.prefix == "" {
		return name
	}
	return path.Join(b.prefix, name)
}

// notExist maps S3's "no such key" answers (a HEAD has no body, so only
// its status says so) to ErrNotExist, and "no such bucket" to ErrNoBucket,
// which names the bucket and the fix.
func (b *s3Backend) notExist(err error) error {
	var nsb *types.NoSuchBucket
	var coded interface{ ErrorCode() string } // smithy.APIError
	if errors.As(err, &nsb) || errors.As(err, &coded) && coded.ErrorCode() == "NoSuchBucket" {
		return fmt.Errorf("%w: there is no bucket %q at this endpoint; create it first (e.g. aws s3 mb s3://%s, with --endpoint-url for a server other than AWS S3), or correct the URL or AWS_ENDPOINT_URL", ErrNoBucket, b.bucket, b.bucket)
	}
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	var re *smithyhttp.ResponseError
	if errors.As(err, &nsk) || errors.As(err, &nf) || errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound {
		return fmt.Errorf("%w (%v)", ErrNotExist, err)
	}
	return err
}

// Get reads at most limit bytes: an object that says it is larger is
// refused before its body is read, and the buffer is never larger than
// the object (at most limit).
func (b *s3Backend) Get(ctx context.Context, name string, limit int64) ([]byte, error) {
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.bucket, Key: aws.String(b.key(name))})
	if err != nil {
		return nil, b.notExist(err)
	}
	defer out.Body.Close()
	size := aws.ToInt64(out.ContentLength)
	if size > limit {
		return nil, fmt.Errorf("%s: %w: %d bytes, more than the %d expected", name, ErrRefused, size, limit)
	}
	if size < 0 {
		size = 0
	}
	return readBounded(out.Body, name, size, limit)
}

// readBounded reads r whole into a buffer of expected bytes, growing it
// only up to limit, and refuses a stream longer than limit.
func readBounded(r io.Reader, name string, expected, limit int64) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, expected+1))
	n, err := io.Copy(buf, io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, fmt.Errorf("%s: %w: more than the %d bytes expected", name, ErrRefused, limit)
	}
	return buf.Bytes(), nil
}

func (b *s3Backend) Put(ctx context.Context, name string, data []byte) error {
	_, err := b.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: &b.bucket, Key: aws.String(b.key(name)),
		Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))),
	})
	if err != nil {
		return b.notExist(err)
	}
	return nil
}

func (b *s3Backend) Stat(ctx context.Context, name string) (Info, error) {
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b.bucket, Key: aws.String(b.key(name))})
	if err != nil {
		return Info{}, b.notExist(err)
	}
	return Info{Name: name, Size: aws.ToInt64(out.ContentLength), ModTime: aws.ToTime(out.LastModified)}, nil
}

func (b *s3Backend) List(ctx context.Context, prefix string, fn func(Info) error) error {
	full := b.key(prefix)
	if prefix == "" && b.prefix != "" {
		full = b.prefix + "/"
	}
	p := s3.NewListObjectsV2Paginator(b.client, &s3.ListObjectsV2Input{Bucket: &b.bucket, Prefix: &full})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return b.notExist(err)
		}
		for _, o := range page.Contents {
			name := aws.ToString(o.Key)
			if b.prefix != "" {
				if len(name) <= len(b.prefix)+1 || name[:len(b.prefix)+1] != b.prefix+"/" {
					continue
				}
				name = name[len(b.prefix)+1:]
			}
			if err := fn(Info{Name: name, Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified)}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *s3Backend) Delete(ctx context.Context, name string) error {
	_, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b.bucket, Key: aws.String(b.key(name))})
	if err != nil {
		if err = b.notExist(err); isNotExist(err) {
			return nil
		}
	}
	return err
}
