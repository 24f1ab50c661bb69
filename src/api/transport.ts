/** The client's `transport` namespace: BagIt export, import, bag verification, import into a store. */
import { exportCase } from '../adapters/bagit/export.js'
import { importCase, verifyBag, withVerifiedPackage } from '../adapters/bagit/import.js'
import { trustPolicy } from '../adapters/case-store/signatures.js'
import { expectedHead } from '../adapters/case-store/receipts.js'
import { settle, settleOwn } from './errors.js'
import type { ClientContext } from './context.js'
import type { TransportApi } from './types.js'
import { definedMembers, optional } from '../optional.js'

/** The `transport` namespace over a client's context. */
export const transportApi = (ctx: ClientContext): TransportApi => {
  const { at, needStore } = ctx
  return {
    export: async (dir, out, o = {}) =>
      settleOwn((own) =>
        exportCase(at(dir), out, {
          format: o.format ?? 'tar',
          ...optional('force', o.force),
          ...optional('onProgress', own(o.onProgress))
        })
      ),
    import: (archive, dir, o = {}) =>
      settleOwn((own) =>
        importCase(archive, dir, {
          ...optional('onProgress', own(o.onProgress)),
          ...optional('strict', o.strict),
          ...optional('requireSigned', o.requireSigned),
          ...(o.trust === undefined ? {} : { trust: trustPolicy(o.trust.allowedSigners, o.trust.actors) })
        })
      ),
    verify: (target, o = {}) =>
      settle(() =>
        verifyBag(
          target,
          {},
          {
            ...expectedHead(o.expectHead, o.trust !== undefined),
            ...definedMembers(o, 'strict', 'requireSigned'),
            ...(o.trust === undefined ? {} : { trust: trustPolicy(o.trust.allowedSigners, o.trust.actors) })
          }
        )
      ),
    importIntoStore: async (source, o = {}) => {
      const s = needStore()
      return settleOwn((own) =>
        withVerifiedPackage(source, (d) => s.importDirectory(d, optional('strict', o.strict)), {
          ...definedMembers(o, 'strict', 'requireSigned'),
          ...optional('onProgress', own(o.onProgress)),
          ...(o.trust === undefined ? {} : { trust: trustPolicy(o.trust.allowedSigners, o.trust.actors) })
        })
      )
    }
  }
}
