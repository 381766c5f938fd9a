-- The read cache of the API and the worker (store/readcache.go) keeps, for a short time, rows
-- every payment reads and that change rarely. Every committed change to them announces itself on
-- the channel sika_read_cache, on which each replica listens and empties its cache: an answer is
-- never used after the change that made it stale was committed and heard.

CREATE FUNCTION sika_read_cache_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('sika_read_cache', TG_TABLE_NAME);
    RETURN NULL;
END;
$$;

CREATE TRIGGER countries_read_cache AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON countries
    FOR EACH STATEMENT EXECUTE FUNCTION sika_read_cache_changed();
CREATE TRIGGER networks_read_cache AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON networks
    FOR EACH STATEMENT EXECUTE FUNCTION sika_read_cache_changed();
CREATE TRIGGER gateway_routes_read_cache AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON gateway_routes
    FOR EACH STATEMENT EXECUTE FUNCTION sika_read_cache_changed();
CREATE TRIGGER pricing_read_cache AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON pricing
    FOR EACH STATEMENT EXECUTE FUNCTION sika_read_cache_changed();
CREATE TRIGGER merchant_settings_read_cache AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON merchant_settings
    FOR EACH STATEMENT EXECUTE FUNCTION sika_read_cache_changed();
CREATE TRIGGER merchants_read_cache AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON merchants
    FOR EACH STATEMENT EXECUTE FUNCTION sika_read_cache_changed();

-- An API key's last use is written once a minute per key and is no part of what is cached
-- for authentication: only the other columns announce a change.
CREATE TRIGGER api_keys_read_cache AFTER UPDATE ON api_keys
    FOR EACH ROW WHEN ((to_jsonb(OLD) - 'last_used_at') IS DISTINCT FROM (to_jsonb(NEW) - 'last_used_at'))
    EXECUTE FUNCTION sika_read_cache_changed();
CREATE TRIGGER api_keys_read_cache_deleted AFTER DELETE OR TRUNCATE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION sika_read_cache_changed();
