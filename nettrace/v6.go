package nettrace

// startV6 reads a NetTrace V6 header. (Implemented in the V6 work.)
func (r *Reader) startV6() error {
	return &UnsupportedVersionError{Found: "NetTrace V6"}
}
