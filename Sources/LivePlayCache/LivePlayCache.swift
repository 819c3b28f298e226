// # LivePlayCache
//
// Media kept on disk to play again without the network (docs/cache.md): JPVideoPlayer's cache-while-playing
// and Volcengine's downloader, for HTTP FLV files (responses with a `Content-Length`).
//
// | type | job |
// |---|---|
// | ``MediaCache`` | a directory of entries with an index: keys (volatile query parameters left out, hashed), the least recently used evicted past the entry limit, the free-space limit |
// | ``CacheIndex`` | the index as a value: entries, their use order, which to evict (pure) |
// | ``CachingSource`` | a ``ByteSource`` for playback: a complete entry from disk, a partial one from disk and then `Range`, anything else through the cache as it plays |
// | ``Downloader`` | download tasks (start, pause, resume, cancel, delete) at most N at a time, resumed with `Range` + `If-Range` |
// | ``DownloadQueue`` | which task runs next (pure) |
//
// Its requests go through LivePlayTransport, the one module that speaks HTTP: a download is an ``HTTPFLVSource``
// over the run's ``HTTPConnectionPool``, resumed with its `Range` and `If-Range` requests.
//
// Disk I/O here is a local file's appends and reads, done on the calling task's executor, as
// ``FileByteSource`` does: a playback's own thread, or the downloader's task.
