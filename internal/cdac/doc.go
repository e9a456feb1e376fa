// Package cdac reads a live .NET runtime's own data structures out of
// process, with no debugger: the runtime's data contract descriptor (.NET
// 9+ libcoreclr.so exports it as DotNetRuntimeContractDescriptor) gives
// the offsets of the fields of its types and the addresses of its globals,
// and /proc/PID/mem (internal/procfs) gives the bytes. Nothing is written
// to the target and it is never stopped.
//
//   - Descriptor (descriptor.go): the contract descriptor's header, its
//     JSON (types, fields, globals, contracts) and its pointer data (the
//     indirect globals), read from any Memory; Find locates the exported
//     symbol in the libcoreclr.so a process maps (its .dynsym, and the
//     load base from /proc/PID/maps).
//   - Process (runtime.go): the runtime's thread store (each Thread's thin
//     lock id and OS thread id), its sync block table (each inflated
//     lock's object, holding thread, recursion and waiter count: the
//     AwareLock of syncblk.h), an object's thin lock (the header word),
//     and an object's type (MethodTable → Module → its file → the TypeDef
//     row, named by clrmeta).
//
// The layouts the descriptor does not carry (the AwareLock inside a
// SyncBlock, the header word's bits) are syncblk.h's: the AwareLock that
// names its holder by thin lock id and OS thread id (.NET 10), or the
// one before it that names a Thread* (found in the thread store), told
// apart and checked by the offset of SyncBlock's InteropInfo, which
// follows the AwareLock and which the descriptor has. .NET 8 and earlier
// export no descriptor: FindRuntime says so (ErrNoDescriptor).
//
// Which lock a blocked thread waits for the runtime does not record where
// this package reads (.NET 9+'s managed ThreadBlockingInfo list is a
// thread static, not read): StackRefs says which contended lock objects
// a thread's stack refers to near its topmost transition Frame.
package cdac
