package formats

import "thv/artifacts/table"

// ReadingRow is one reading of the readings sweep (thv readings): how its
// results compare with the paper's published values. Columns: reading, set
// (its overrides, "; "-separated), values, agree, agree_hv, agree_regret,
// agree_ci (under tolerance (a) instead), claims, claims_hold,
// ci_ratio_thvucb_hv, ci_ratio_hv, ci_ratio_regret, compare_key,
// instance_seeds, protocol, protocol_digest.
type ReadingRow struct {
	Reading, Set               string
	Values, Agree              int // published values compared, and agreeing under the applied tolerance
	AgreeHV, AgreeRegret       int // of Agree, HV_last100 and Final Regret values
	AgreeCI                    int // values agreeing under tolerance (a), CI overlap or relative
	Claims, ClaimsHold         int
	CIRatioTHVUCBHV, CIRatioHV float64 // median of our CI half-width over the published one: THV-UCB's HV_last100 cells, all HV_last100 cells
	CIRatioRegret              float64 // the same over Final Regret cells with a published CI > 0
	CompareKey                 string  // the key of the reading's compare task (its first run's)
	InstanceSeeds              int     // fixed instances the values are judged over; 0: one run, by its seeds
	// Protocol and ProtocolDigest name the protocol the sweep varies (its
	// description against the paper's, and the digest of its values), so
	// that a page of another protocol does not show this row as its own.
	Protocol, ProtocolDigest string
}

// EncodeReadings writes a readings table.
func EncodeReadings(rows []ReadingRow) ([]byte, error) {
	n := len(rows)
	name, set, key := make([]string, n), make([]string, n), make([]string, n)
	vals, agree, ahv, areg, aci, claims, hold := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	rThv, rHV, rReg := make([]float64, n), make([]float64, n), make([]float64, n)
	inst := make([]int64, n)
	proto, digest := make([]string, n), make([]string, n)
	for i, r := range rows {
		inst[i] = int64(r.InstanceSeeds)
		proto[i], digest[i] = r.Protocol, r.ProtocolDigest
		name[i], set[i], key[i] = r.Reading, r.Set, r.CompareKey
		vals[i], agree[i], ahv[i], areg[i], aci[i] = int64(r.Values), int64(r.Agree), int64(r.AgreeHV), int64(r.AgreeRegret), int64(r.AgreeCI)
		claims[i], hold[i] = int64(r.Claims), int64(r.ClaimsHold)
		rThv[i], rHV[i], rReg[i] = r.CIRatioTHVUCBHV, r.CIRatioHV, r.CIRatioRegret
	}
	return encode("readings",
		table.StringColumn("reading", name), table.StringColumn("set", set),
		table.Int64Column("values", vals), table.Int64Column("agree", agree), table.Int64Column("agree_hv", ahv),
		table.Int64Column("agree_regret", areg), table.Int64Column("agree_ci", aci),
		table.Int64Column("claims", claims), table.Int64Column("claims_hold", hold),
		table.Float64Column("ci_ratio_thvucb_hv", rThv), table.Float64Column("ci_ratio_hv", rHV), table.Float64Column("ci_ratio_regret", rReg),
		table.StringColumn("compare_key", key), table.Int64Column("instance_seeds", inst),
		table.StringColumn("protocol", proto), table.StringColumn("protocol_digest", digest))
}

// DecodeReadings reads a readings table.
func DecodeReadings(b []byte) ([]ReadingRow, error) {
	c := read("readings", b)
	name, set, key := c.strings("reading"), c.strings("set"), c.strings("compare_key")
	vals, agree, ahv, areg, aci := c.int64s("values"), c.int64s("agree"), c.int64s("agree_hv"), c.int64s("agree_regret"), c.int64s("agree_ci")
	claims, hold := c.int64s("claims"), c.int64s("claims_hold")
	rThv, rHV, rReg := c.float64s("ci_ratio_thvucb_hv"), c.float64s("ci_ratio_hv"), c.float64s("ci_ratio_regret")
	inst := c.int64s("instance_seeds")
	proto, digest := c.strings("protocol"), c.strings("protocol_digest")
	if err := c.check(); err != nil {
		return nil, err
	}
	rows := make([]ReadingRow, len(name))
	for i := range rows {
		rows[i] = ReadingRow{Reading: name[i], Set: set[i], Values: int(vals[i]), Agree: int(agree[i]), AgreeHV: int(ahv[i]),
			AgreeRegret: int(areg[i]), AgreeCI: int(aci[i]), Claims: int(claims[i]), ClaimsHold: int(hold[i]),
			CIRatioTHVUCBHV: rThv[i], CIRatioHV: rHV[i], CIRatioRegret: rReg[i], CompareKey: key[i], InstanceSeeds: int(inst[i]),
			Protocol: proto[i], ProtocolDigest: digest[i]}
	}
	return rows, nil
}
