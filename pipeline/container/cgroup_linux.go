package container

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Every container's cgroup is made by its runtime (which sets the memory
// and pids limits on it and removes it when the container ends) under a
// parent cgroup of its own, /thv-<random>-<n> in every hierarchy (podman's
// default parent, /libpod_parent, is absolute too). The parent outlives
// the container: its counters, which cover its children, tell the host
// afterwards how much memory and how many processes the container used at
// most, and so whether the worker it lost had reached a limit. (Cgroup v1
// counts OOM kills only in the cgroup whose limit was hit, which the
// runtime has removed by the time the host hears of the death; v2 counts
// them in the parent too.) The executor removes the parents on Close.

// cgroupMounts are the mount points of the cgroup hierarchies: every
// cgroup v1 hierarchy and the v2 one, and which of them hold the memory
// and pids controllers.
type cgroupMounts struct {
	all          []string
	memory, pids string // "" if the controller is not mounted
	memV2, pidV2 bool   // the controller is on the cgroup v2 hierarchy
}

// needMemory says why no container can run without the memory
// controller: it is what bounds each container's memory.
func (m cgroupMounts) needMemory() error {
	if m.memory == "" {
		return errors.New("container executor: no memory cgroup controller is mounted (/proc/self/mountinfo): it is what bounds each container's memory")
	}
	return nil
}

func findCgroupMounts() cgroupMounts {
	var m cgroupMounts
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return m
	}
	defer f.Close()
	var unified string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := -1
		for i := 6; i < len(fields); i++ {
			if fields[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+3 >= len(fields) {
			continue
		}
		point, typ, super := fields[4], fields[sep+1], fields[sep+3]
		switch typ {
		case "cgroup":
			m.all = append(m.all, point)
			for _, o := range strings.Split(super, ",") {
				switch o {
				case "memory":
					m.memory = point
				case "pids":
					m.pids = point
				}
			}
		case "cgroup2":
			m.all = append(m.all, point)
			unified = point
		}
	}
	if unified != "" {
		b, _ := os.ReadFile(filepath.Join(unified, "cgroup.controllers"))
		ctrl := strings.Fields(string(b))
		if m.memory == "" && slices.Contains(ctrl, "memory") {
			m.memory, m.memV2 = unified, true
		}
		if m.pids == "" && slices.Contains(ctrl, "pids") {
			m.pids, m.pidV2 = unified, true
		}
	}
	return m
}

// prepare makes the parent cgroup name (/thv-…) in the memory and pids
// hierarchies, where its counters are read; the runtime makes the rest.
func (m cgroupMounts) prepare(name string) error {
	if m.memory == "" {
		return errors.New("no memory cgroup hierarchy is mounted")
	}
	for _, mnt := range []string{m.memory, m.pids} {
		if mnt != "" {
			if err := os.MkdirAll(filepath.Join(mnt, name), 0o755); err != nil {
				return err
			}
		}
	}
	return nil
}

// cgroupUsage is what a parent cgroup's counters say of the containers
// under it: the most memory (bytes) and processes they used at once, and
// how many processes the OOM killer stopped (counted on v2 only). A
// counter the kernel does not keep is -1.
type cgroupUsage struct {
	memPeak, pidsPeak, oomKills int64
}

func (m cgroupMounts) usage(name string) cgroupUsage {
	u := cgroupUsage{-1, -1, -1}
	read := func(mnt, file string) string {
		if mnt == "" {
			return ""
		}
		b, _ := os.ReadFile(filepath.Join(mnt, name, file))
		return string(b)
	}
	num := func(s string) int64 {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return -1
		}
		return n
	}
	if m.memV2 {
		u.memPeak = num(read(m.memory, "memory.peak"))
		for _, line := range strings.Split(read(m.memory, "memory.events"), "\n") {
			if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
				u.oomKills = num(v)
			}
		}
	} else {
		u.memPeak = num(read(m.memory, "memory.max_usage_in_bytes"))
	}
	u.pidsPeak = num(read(m.pids, "pids.peak"))
	return u
}

// remove removes the parent cgroup name and what the runtime left under
// it, in every hierarchy. A cgroup that still has processes stays (rmdir
// refuses it): nothing here kills.
func (m cgroupMounts) remove(name string) error {
	var errs []error
	for _, mnt := range m.all {
		dir := filepath.Join(mnt, name)
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		// Children first: a cgroup directory holds only its control
		// files (which rmdir ignores) and its child cgroups.
		var dirs []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			// A runtime may still be tearing down (podman's conmon
			// exits after the container): a busy cgroup gets a moment.
			var err error
			for try := 0; try < 20; try++ {
				if err = syscall.Rmdir(dirs[i]); err != syscall.EBUSY {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil && err != syscall.ENOENT {
				errs = append(errs, &os.PathError{Op: "rmdir", Path: dirs[i], Err: err})
			}
		}
	}
	return errors.Join(errs...)
}
