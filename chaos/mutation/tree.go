package mutation

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// RepoRoot returns the root of the git working tree that holds dir.
func RepoRoot(ctx context.Context, dir string) (string, error) {
	out, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// CopyTree copies into dst (which must exist) the files of the working tree
// at root that git lists as tracked or as untracked and not ignored: the
// tree as it is, uncommitted changes included, without build outputs. A
// tracked file deleted from the working tree is skipped; symbolic links are
// copied as links. It returns the number of files copied.
func CopyTree(ctx context.Context, root, dst string) (int, error) {
	out, err := git(ctx, root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return 0, err
	}
	n := 0
	seen := map[string]bool{}
	for _, name := range strings.Split(string(out), "\x00") {
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		copied, err := copyFile(filepath.Join(root, name), filepath.Join(dst, name))
		if err != nil {
			return n, fmt.Errorf("mutation: copy %s: %w", name, err)
		}
		if copied {
			n++
		}
	}
	return n, nil
}

// copyFile copies src to dst, making dst's directory; it reports false for
// a src that no longer exists.
func copyFile(src, dst string) (bool, error) {
	st, err := os.Lstat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return false, err
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return false, err
		}
		return true, os.Symlink(target, dst)
	case !st.Mode().IsRegular():
		return false, nil // a submodule or a socket: nothing to test
	}
	in, err := os.Open(src)
	if err != nil {
		return false, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, st.Mode().Perm())
	if err != nil {
		return false, err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return false, err
	}
	return true, out.Close()
}

// git runs git in dir and returns its standard output.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("mutation: git %s in %s: %w: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
