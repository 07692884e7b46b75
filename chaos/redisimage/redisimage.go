package redisimage

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"os/exec"
	"strings"
	"sync"
)

// Tag is the image Build produces by default.
const Tag = "quorumlock/redis-local:latest"

//go:embed build-image.sh
var script string

// Build builds the image tag ("" for Tag) from the redis-server on PATH and
// returns its name. It needs bash, ldd and the docker command line.
func Build(ctx context.Context, tag string) (string, error) {
	if tag == "" {
		tag = Tag
	}
	cmd := exec.CommandContext(ctx, "bash", "-s", "--", tag)
	cmd.Stdin = strings.NewReader(script)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("redisimage: build %s: %w: %s", tag, err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

var once struct {
	sync.Once
	image string
	err   error
}

// BuildOnce builds Tag the first time it is called in a process and returns
// the same result afterwards; tests of several packages share it this way.
func BuildOnce(ctx context.Context) (string, error) {
	once.Do(func() { once.image, once.err = Build(ctx, Tag) })
	return once.image, once.err
}
