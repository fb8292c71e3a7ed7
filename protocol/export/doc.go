// Package export writes what a pass leaves in results/: the tables,
// figures and comparison copied from the store, each figure's PNG drawn
// from its stored curves and stamped with their digest, a README index,
// and index.html, the page of it all (gathered here from the store,
// rendered by protocol/export/report). It runs in no task.
package export
