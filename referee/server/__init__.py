"""The asyncio + gRPC shell around the match core: codec (the only protobuf <-> value
translation), table (feeds a Match its inputs and sends its outputs), service (the RPCs) and
serve (`tichu serve`)."""
