/** Enrichment (the pure logic lives in src/domain/enrich.ts, over a query port; research is that port). */
export {
  enrich,
  type EnrichmentResult,
  type EnrichmentQueries,
  type CoverageGap,
  type Fact,
  type Provenance
} from '../domain/enrich.js'
