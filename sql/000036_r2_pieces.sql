-- An R2 object streamed in, or completed from its parts, is its pieces in order, each a blob of the
-- account (never joined into one: an object is never held whole). A one-piece object keeps naming
-- its blob in sha256.
alter table r2_objects alter column sha256 drop not null;
alter table r2_objects add column pieces bytea[], add column piece_sizes bigint[];
alter table r2_objects add constraint r2_objects_bytes_named
  check ((sha256 is null) <> (pieces is null) and (pieces is null) = (piece_sizes is null));
create index r2_objects_pieces_idx on r2_objects using gin (pieces);
