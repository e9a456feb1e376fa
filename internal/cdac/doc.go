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
//     an object's type (MethodTable → Module → its file → the TypeDef
//     row, named by clrmeta), what a thread is blocked on;
//   - System.Threading.Lock (runtime.go: BlockedOnLock, ReadManagedLock):
//     the Lock a thread waits for from its ThreadBlockingInfo of kind Lock
//     (a pointer to the stack slot holding it), its holder from its own
//     fields (on CoreCLR the owner's OS thread id);
//   - static fields (statics.go): the modules of the app domain's
//     assemblies, a class's MethodTable by its TypeDef row, its reference
//     statics through its FieldDescs and GC statics: which static field
//     holds a lock object (Class.Field);
//   - generic instantiations named with their type arguments (the last
//     dictionary of PerInstInfo);
//   - ReadLocks and Namer (locks.go, namer.go): one reading of a
//     process's locks for `stacks`, and a cached naming of lock objects
//     for the live views.
//
// The layouts the descriptor does not carry (the AwareLock inside a
// SyncBlock, the header word's bits) are syncblk.h's: the AwareLock that
// names its holder by thin lock id and OS thread id (.NET 10), or the
// one before it that names a Thread* (found in the thread store), told
// apart and checked by the offset of SyncBlock's InteropInfo, which
// follows the AwareLock and which the descriptor has. .NET 8 and earlier
// export no descriptor: FindRuntime says so (ErrNoDescriptor).
//
// Which lock a blocked thread waits for: .NET 9+ keeps a ThreadBlockingInfo
// record on the waiting thread's stack (debuggers reach the list through
// the thread static t_first; BlockedOn finds the records themselves near
// the thread's topmost transition Frame: for a Monitor, its AwareLock,
// i.e. its sync block, and kind MonitorLock). StackRefs, which contended
// lock objects the stack refers to, is the fallback.
package cdac
