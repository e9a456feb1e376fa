package monitor

func ms(ns int64) float64 { return float64(ns) / 1e6 }
