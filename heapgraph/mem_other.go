//go:build !linux

package heapgraph

import (
	"errors"
	"os"
)

// Elsewhere than Linux the arrays stay in the Go heap (see mem_linux.go):
// a store that maps nothing.

const maxElems = 1 << 32

type store struct{}

func newStore(bool, string) *store       { return nil }
func (s *store) release()                {}
func (s *store) wrote(int64)             {}
func (s *store) Err() error              { return nil }
func (s *store) closeAll()               {}
func (s *store) Watch(int64)             {}
func makeArr[T any](_ *store, n int) []T { return make([]T, n) }
func freeArr[T any](*store, []T)         {}

type vec[T any] struct{ s []T }

func newVec[T any](*store, int) vec[T] { return vec[T]{} }
func (v *vec[T]) push(x T)             { v.s = append(v.s, x) }
func (v *vec[T]) free()                { *v = vec[T]{} }
func (v *vec[T]) grow()                {}

var memAvailable = func() int64 { return 0 }

func spillVec[T any](*vec[T]) error { return nil }

func parkArr[T any](*store, []T) error { return nil }

func (s *store) behind(f func()) { f() }

func (s *store) mapFile(*os.File, int64) ([]byte, error) { return nil, errNoMap }

var errNoMap = errors.New("no file mapping here")
