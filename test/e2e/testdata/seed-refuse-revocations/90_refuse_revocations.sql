-- Added to seed/*.sql by the spot-check e2e test: the database refuses the revocation of every
-- certificate whose id ends in 7 (10 % of each of bulk_revoke's four sets, ids <tag>-<way>_<size>-<i>),
-- as a failing write would. certctl counts such a certificate in total_failed, which breaches
-- bulk_revoke_failed count==0.
CREATE OR REPLACE FUNCTION lt_refuse_revocation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.certificate_id LIKE '%7' THEN
    RAISE EXCEPTION 'certctl-loadtest fault: revocation of % refused', NEW.certificate_id;
  END IF;
  RETURN NEW;
END
$$;
DROP TRIGGER IF EXISTS lt_refuse_revocation ON certificate_revocations;
CREATE TRIGGER lt_refuse_revocation BEFORE INSERT ON certificate_revocations
  FOR EACH ROW EXECUTE FUNCTION lt_refuse_revocation();
