"""Tests of the gRPC referee: a real server, real clients, scripted bots."""
