// Package all registers every algorithm family of THV with the algos
// registry; import it for its side effect.
package all

import (
	_ "thv/algos/chebyshev"
	_ "thv/algos/hvscalar"
	_ "thv/algos/paretodiv"
	_ "thv/algos/paretots"
	_ "thv/algos/paretoucb"
	_ "thv/algos/randomk"
	_ "thv/algos/scalarucb"
	_ "thv/algos/thvucb"
)
