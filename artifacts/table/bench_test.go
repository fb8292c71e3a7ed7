package table

import "testing"

func BenchmarkEncode50kRows(b *testing.B) {
	t := largeTable(50000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(t); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode50kRows(b *testing.B) {
	data, err := Encode(largeTable(50000))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}
