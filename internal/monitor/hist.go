package monitor

import (
	"math"
	"strconv"
)

// Opt is a number the events may not carry: NaN when absent, written as
// JSON null.
type Opt float64

// None is the absent value.
var None = Opt(math.NaN())

// Valid reports whether the value is present.
func (o Opt) Valid() bool { return !math.IsNaN(float64(o)) }

// Or is the value, or def when absent.
func (o Opt) Or(def float64) float64 {
	if o.Valid() {
		return float64(o)
	}
	return def
}

// MarshalJSON writes the number, or null.
func (o Opt) MarshalJSON() ([]byte, error) {
	if !o.Valid() || math.IsInf(float64(o), 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(o), 'g', -1, 64), nil
}

// UnmarshalJSON reads a number or null.
func (o *Opt) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = None
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	*o = Opt(f)
	return err
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }
