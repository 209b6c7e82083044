package temporalserver

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite's pages come from one buffer that lives as long as the process
// (SQLITE_CONFIG_PAGECACHE) rather than from malloc.
//
// The embedded server's visibility lists sort their rows (ORDER BY ...
// LIMIT) in a temporary b-tree whose pages SQLite allocates one by one
// and frees when the statement ends. modernc's allocator serves
// allocations of a page's size from 64 KiB mappings that it unmaps once
// they are empty, so from malloc every sorted list maps, faults in and
// unmaps its temporary pages anew, most of a sorted page's cost
// (BenchmarkSortedPage, BENCHMARKS.md). Pages past the buffer's end come
// from malloc.
const (
	// pageCacheSlots is the buffer's size in pages: the single
	// connection's own cache (2000 KiB, SQLite's default) and the
	// temporary b-trees of a few sorted lists at once.
	pageCacheSlots = 2048
	// pageSize is SQLite's default page size, which the server's schema
	// keeps.
	pageSize = 4096
)

// usePageCache sets up the buffer once in the process and returns why it
// could not, or nil. SQLite takes it only before its first connection
// opens: Start calls it before it opens the database, and a process that
// runs no embedded server never maps the buffer.
var usePageCache = sync.OnceValue(setUpPageCache)

func setUpPageCache() error {
	tls := libc.NewTLS()
	defer tls.Close()
	header := new(int32)
	var pin runtime.Pinner // SQLite writes to it by address
	pin.Pin(header)
	defer pin.Unpin()
	if rc := configureSQLite(tls, sqlite3.SQLITE_CONFIG_PCACHE_HDRSZ, uintptr(unsafe.Pointer(header))); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("sqlite page cache: header size: error %d", rc)
	}
	slot := pageSize + int(*header)
	// Never freed: SQLite holds it for the process's life. The kernel
	// maps in only the pages SQLite touches.
	buf := libc.Xmalloc(tls, types.Size_t(slot*pageCacheSlots))
	if buf == 0 {
		return fmt.Errorf("sqlite page cache: out of memory")
	}
	if rc := configureSQLite(tls, sqlite3.SQLITE_CONFIG_PAGECACHE, buf, int32(slot), int32(pageCacheSlots)); rc != sqlite3.SQLITE_OK {
		libc.Xfree(tls, buf)
		return fmt.Errorf("sqlite page cache: error %d (SQLite already in use?)", rc)
	}
	return nil
}

// configureSQLite calls sqlite3_config(op, args...).
func configureSQLite(tls *libc.TLS, op int32, args ...any) int32 {
	va := libc.NewVaList(args...)
	defer libc.Xfree(tls, va)
	return sqlite3.Xsqlite3_config(tls, op, va)
}
