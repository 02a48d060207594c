package harness

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Owner is the user a run's files belong to. k6 runs as this user, so it can write into the run
// directory without the directory being writable by anyone else.
type Owner struct{ UID, GID int }

func (o Owner) String() string { return strconv.Itoa(o.UID) + ":" + strconv.Itoa(o.GID) }

// InvokingUser is the user who asked for the run: the one sudo names when the harness runs as root
// through sudo (results in their checkout stay theirs), else the process's own.
func InvokingUser(getenv func(string) string, euid, egid int) Owner {
	if euid == 0 {
		uid, err1 := strconv.Atoi(getenv("SUDO_UID"))
		gid, err2 := strconv.Atoi(getenv("SUDO_GID"))
		if err1 == nil && err2 == nil && uid > 0 {
			return Owner{uid, gid}
		}
	}
	return Owner{euid, egid}
}

// chownTree gives the run directory, the results directory and its latest link to the owner, without
// following links. Nothing to do when the harness runs as the owner.
func (o Owner) chownTree(resultsDir, dir string) {
	if os.Geteuid() != 0 || o.UID == 0 {
		return
	}
	os.Lchown(resultsDir, o.UID, o.GID)
	os.Lchown(filepath.Join(resultsDir, "latest"), o.UID, o.GID)
	filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err == nil {
			os.Lchown(path, o.UID, o.GID)
		}
		return nil
	})
}

// makeRunDir creates the run's directory and its folders, 0755 and the owner's: k6 runs as the owner
// and writes its records there (k6 creates no folder itself, and exits 0 when it cannot write).
// extraK6Dirs are further folders k6 writes to.
func makeRunDir(dir string, owner Owner, extraK6Dirs ...string) error {
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("%s already exists: results of a run are never overwritten; pick another RUN_ID", dir)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	// Mkdir, not MkdirAll: the run's own directory must be new, not a link someone planted.
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	dirs := []string{dir}
	for _, d := range append([]string{"scenarios", "dashboard", "raw", "logs"}, extraK6Dirs...) {
		p := filepath.Join(dir, d)
		if err := os.Mkdir(p, 0o755); err != nil {
			return err
		}
		dirs = append(dirs, p)
	}
	for _, d := range dirs {
		// An explicit mode: a umask of 077 would lock out nobody but readers; 0755 either way.
		if err := os.Chmod(d, 0o755); err != nil {
			return err
		}
		if os.Geteuid() == 0 && owner.UID != 0 {
			if err := os.Lchown(d, owner.UID, owner.GID); err != nil {
				return err
			}
		}
	}
	return nil
}

// freeBytes is the space an unprivileged writer may still use on the file system of dir.
func freeBytes(dir string) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return st.Bavail * uint64(st.Bsize), true
}

// updateLatest points results/latest at the run that just finished.
func updateLatest(resultsDir, runID string) {
	link := filepath.Join(resultsDir, "latest")
	tmp := link + ".tmp"
	os.Remove(tmp)
	if err := os.Symlink(runID, tmp); err == nil {
		os.Rename(tmp, link)
	}
}
