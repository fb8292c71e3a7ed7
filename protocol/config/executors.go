package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// The executors section of params.yaml holds the settings of the executors
// that take some: where tasks run, never what they compute. The protocol
// imports no executor: it keeps each executor's section undecoded
// (Config.Executors) and checks it with what the binary registered for
// that executor, so that a wrong key or value is refused when the protocol
// is loaded, whatever the executor of the run.
var (
	executorsMu sync.RWMutex
	executors   = map[string]func(section map[string]any) error{}
)

// RegisterExecutor makes executors.<name> a section of params.yaml, checked
// by check: check decodes the section (plain values, as Config.Executors
// holds them) strictly and validates it, and its errors name the key
// without the executors.<name> prefix. The binary registers each executor
// that takes settings; a section of any other name is an error.
func RegisterExecutor(name string, check func(section map[string]any) error) {
	executorsMu.Lock()
	defer executorsMu.Unlock()
	if _, dup := executors[name]; dup {
		panic("protocol: executor " + name + " registered twice")
	}
	executors[name] = check
}

// checkExecutors checks every section of executors with its executor's
// check.
func (c *Config) checkExecutors() error {
	executorsMu.RLock()
	defer executorsMu.RUnlock()
	for _, name := range slices.Sorted(maps.Keys(c.Executors)) {
		check, ok := executors[name]
		if !ok {
			known := slices.Sorted(maps.Keys(executors))
			if len(known) == 0 {
				return fmt.Errorf("executors.%s: no executor of this binary takes settings", name)
			}
			return fmt.Errorf("executors.%s: no executor of that name takes settings (known: %s)", name, strings.Join(known, ", "))
		}
		if err := check(c.Executors[name]); err != nil {
			return fmt.Errorf("executors.%s.%w", name, err)
		}
	}
	return nil
}
