-- A results store as tichu's first release (cf494ff) wrote it: schema version 1, made with that
-- release's referee/tournament/store.py (`git show cf494ff:referee/tournament/store.py`) for the
-- tournament test_migrations.CONFIG, and dumped with `sqlite3 store.sqlite .dump`.
-- Run 1 (pid 4242): p00-b0000-t0 finished on attempt 1; p00-b0000-t1 started and set pending.
-- Run 2 (resume, pid 4343): p00-b0000-t1 finished on attempt 2; p00-b0001-t1 started and set
-- pending (its match_id stays: version 1's stale pointer); p00-b0001-t0 started, one round scored,
-- and the run was killed (it stays running). p00-b0002-t0 and -t1 were never started.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES('schema','1');
INSERT INTO meta VALUES('fingerprint','6b1a5a5f1ebbe2f1');
INSERT INTO meta VALUES('config','{"bots": {"heuristic": "clients.heuristic_bot:HeuristicBot", "random": "clients.random_bot:RandomBot"}, "candidate": "", "duplicate": true, "format": "round_robin", "games_per_pairing": 6, "name": "v1", "preset": "tournament", "rules_overrides": {}, "seed": "fixture", "teams": {"heuristic": ["heuristic", "heuristic"], "random": ["random", "random"]}}');
INSERT INTO meta VALUES('created_at','1796293050.9266639');
INSERT INTO meta VALUES('salt_key','1b22f794c8140f5b3e0d1ed8c29a54fd2d572332ae0518148d7610c6783bd350');
CREATE TABLE runs (
    run_id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,             -- 'run' or 'resume'
    started_at REAL NOT NULL,
    pid INTEGER NOT NULL
);
INSERT INTO runs VALUES(1,'run',1796293050.9270823002,4242);
INSERT INTO runs VALUES(2,'resume',1796293050.9304118156,4343);
CREATE TABLE games (
    game_id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,           -- position in the schedule
    pairing INTEGER NOT NULL,
    board INTEGER NOT NULL,
    table_no INTEGER NOT NULL,
    seed TEXT NOT NULL,
    team_even TEXT NOT NULL,        -- seats 0 and 2 (the referee's team A)
    team_odd TEXT NOT NULL,         -- seats 1 and 3 (team B)
    players TEXT NOT NULL,          -- JSON: the entrant at each seat
    status TEXT NOT NULL DEFAULT 'pending',  -- pending, running, finished
    attempts INTEGER NOT NULL DEFAULT 0,
    run_id INTEGER,                 -- the run that last started it
    match_id TEXT,
    replay_path TEXT,
    score_even INTEGER,
    score_odd INTEGER,
    winner INTEGER,                 -- 0: team_even, 1: team_odd, -1: draw
    forfeit INTEGER,
    forfeiting_team INTEGER,
    reason TEXT,
    rounds INTEGER,
    started_at REAL,
    finished_at REAL,
    summary_json TEXT
);
INSERT INTO games VALUES('p00-b0000-t0',0,0,0,0,'b0-193ad51c141a','random','heuristic','["random", "heuristic", "random", "heuristic"]','finished',1,1,'v1-p00-b0000-t0-a1','out/replays/v1-p00-b0000-t0-a1.jsonl',300,100,0,0,-1,'',1,1796293050.9272816181,1796293050.9276070594,'{"match_id":"v1-p00-b0000-t0-a1","state_version":321,"seats":[{"seat":0,"bot_name":"random","bot_version":"","decisions":40,"think_ms_p50":0.4,"think_ms_p99":2.5,"timeouts":0,"rejections":0,"tichu_calls":1,"tichu_won":0,"grand_tichu_calls":0,"grand_tichu_won":0,"bombs_played":0,"points_won":0,"reconnections":0,"rate_limited":0,"bank_left_ms":4000},{"seat":1,"bot_name":"heuristic","bot_version":"1.0","decisions":41,"think_ms_p50":1.4,"think_ms_p99":3.5,"timeouts":0,"rejections":1,"tichu_calls":1,"tichu_won":1,"grand_tichu_calls":0,"grand_tichu_won":0,"bombs_played":0,"points_won":25,"reconnections":0,"rate_limited":0,"bank_left_ms":4000},{"seat":2,"bot_name":"random","bot_version":"","decisions":42,"think_ms_p50":2.4,"think_ms_p99":4.5,"timeouts":0,"rejections":0,"tichu_calls":1,"tichu_won":0,"grand_tichu_calls":0,"grand_tichu_won":0,"bombs_played":1,"points_won":50,"reconnections":0,"rate_limited":0,"bank_left_ms":4000},{"seat":3,"bot_name":"heuristic","bot_version":"1.0","decisions":43,"think_ms_p50":3.4,"think_ms_p99":5.5,"timeouts":0,"rejections":1,"tichu_calls":1,"tichu_won":1,"grand_tichu_calls":0,"grand_tichu_won":0,"bombs_played":1,"points_won":75,"reconnections":0,"rate_limited":0,"bank_left_ms":4000}]}');
INSERT INTO games VALUES('p00-b0000-t1',1,0,0,1,'b0-193ad51c141a','heuristic','random','["heuristic", "random", "heuristic", "random"]','finished',2,2,'v1-p00-b0000-t1-a2','out/replays/v1-p00-b0000-t1-a2.jsonl',150,250,1,0,-1,'',1,1796293050.9311635494,1796293050.9314882754,'{"match_id":"v1-p00-b0000-t1-a2","state_version":321,"seats":[{"seat":0,"bot_name":"heuristic","bot_version":"1.0","decisions":40,"think_ms_p50":0.4,"think_ms_p99":2.5,"timeouts":0,"rejections":0,"tichu_calls":1,"tichu_won":0,"grand_tichu_calls":0,"grand_tichu_won":0,"bombs_played":0,"points_won":0,"reconnections":0,"rate_limited":0,"bank_left_ms":4000},{"seat":1,"bot_name":"random","bot_version":"","decisions":41,"think_ms_p50":1.4,"think_ms_p99":3.5,"timeouts":0,"rejections":1,"tichu_calls":1,"tichu_won":1,"grand_tichu_calls":0,"grand_tichu_won":0,"bombs_played":0,"points_won":25,"reconnections":0,"rate_limited":0,"bank_left_ms":4000},{"seat":2,"bot_name":"heuristic","bot_version":"1.0","decisions":42,"think_ms_p50":2.4,"think_ms_p99":4.5,"timeouts":0,"rejections":0,"tichu_calls":1,"tichu_won":0,"grand_tichu_calls":0,"grand_tichu_won":0,"bombs_played":1,"points_won":50,"reconnections":0,"rate_limited":0,"bank_left_ms":4000},{"seat":3,"bot_name":"random","bot_version":"","decisions":43,"think_ms_p50":3.4,"think_ms_p99":5.5,"timeouts":0,"rejections":1,"tichu_calls":1,"tichu_won":1,"grand_tichu_calls":0,"grand_tichu_won":0,"bombs_played":1,"points_won":75,"reconnections":0,"rate_limited":0,"bank_left_ms":4000}]}');
INSERT INTO games VALUES('p00-b0001-t0',2,0,1,0,'b1-6998d9c79646','random','heuristic','["random", "heuristic", "random", "heuristic"]','running',1,2,'v1-p00-b0001-t0-a1','out/replays/v1-p00-b0001-t0-a1.jsonl',NULL,NULL,NULL,NULL,NULL,NULL,NULL,1796293050.9316875934,NULL,NULL);
INSERT INTO games VALUES('p00-b0001-t1',3,0,1,1,'b1-6998d9c79646','heuristic','random','["heuristic", "random", "heuristic", "random"]','pending',1,2,'v1-p00-b0001-t1-a1','out/replays/v1-p00-b0001-t1-a1.jsonl',NULL,NULL,NULL,NULL,NULL,NULL,NULL,1796293050.9315781593,NULL,NULL);
INSERT INTO games VALUES('p00-b0002-t0',4,0,2,0,'b2-c125b6d15738','random','heuristic','["random", "heuristic", "random", "heuristic"]','pending',0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO games VALUES('p00-b0002-t1',5,0,2,1,'b2-c125b6d15738','heuristic','random','["heuristic", "random", "heuristic", "random"]','pending',0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
CREATE TABLE rounds (
    game_id TEXT NOT NULL REFERENCES games(game_id),
    round INTEGER NOT NULL,
    points_even INTEGER NOT NULL,
    points_odd INTEGER NOT NULL,
    total_even INTEGER NOT NULL,
    total_odd INTEGER NOT NULL,
    scored_at REAL NOT NULL,
    PRIMARY KEY (game_id, round)
);
INSERT INTO rounds VALUES('p00-b0000-t0',0,300,100,300,100,1796293050.9273855685);
INSERT INTO rounds VALUES('p00-b0000-t1',0,150,250,150,250,1796293050.9312548637);
INSERT INTO rounds VALUES('p00-b0001-t0',0,60,40,60,40,1796293050.9317252635);
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('runs',2);
CREATE INDEX games_by_status ON games(status, seq);
COMMIT;
