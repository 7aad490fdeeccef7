// Spec 1, Admin: users. Admins list, create, promote, unthrottle and delete users.
import { hashPassword } from '../../../src/auth/password'
import { isUniqueViolation } from '../../../src/core/db'
import { HttpError } from '../../../src/core/errors'
import type { Core } from '../../../src/plugin'
import type { Role, UserResponse } from '../models/accounts'
import type { CreateUserBody } from '../models/users'
import { deleteDocument } from './documents'
import { normaliseEmail, toUserResponse, USER_COLUMNS, type UserRow } from './accounts'

export async function listUsers(core: Core): Promise<UserResponse[]> {
  const rows = await core.db.sql<UserRow>`select ${USER_COLUMNS} from quiz.users order by id`
  return rows.map(toUserResponse)
}

export async function createUser(core: Core, input: CreateUserBody): Promise<UserResponse> {
  try {
    const [row] = await core.db.sql<UserRow>`
      insert into quiz.users (email, name, password_hash, role, is_verified)
      values (${normaliseEmail(input.email)}, ${input.name.trim()}, ${await hashPassword(input.password)}, 'user', true)
      returning ${USER_COLUMNS}`
    return toUserResponse(row!)
  } catch (err) {
    if (isUniqueViolation(err)) throw HttpError.conflict('email_taken', 'Email already registered')
    throw err
  }
}

const notFound = () => HttpError.notFound('user_not_found', 'User not found')

export async function setRole(core: Core, actorId: number, userId: number, role: Role): Promise<UserResponse> {
  if (actorId === userId) throw HttpError.badRequest('own_role', 'You cannot change your own role')
  const [row] = await core.db.sql<UserRow>`update quiz.users set role = ${role} where id = ${userId} returning ${USER_COLUMNS}`
  if (!row) throw notFound()
  return toUserResponse(row)
}

export async function setUnthrottled(core: Core, userId: number, unthrottled: boolean): Promise<UserResponse> {
  const [row] = await core.db.sql<UserRow>`update quiz.users set unthrottled = ${unthrottled} where id = ${userId} returning ${USER_COLUMNS}`
  if (!row) throw notFound()
  return toUserResponse(row)
}

/**
 * Deletes the user and everything that is theirs in one transaction: documents (their stored files and vector
 * collections go once it commits), rows (by foreign key cascade), jobs and stored settings.
 */
export async function deleteUser(core: Core, actorId: number, userId: number): Promise<void> {
  if (actorId === userId) throw HttpError.badRequest('delete_self', 'You cannot delete your own account')
  await core.transaction(async (tx) => {
    // Through the documents service, before the cascade would remove the rows it needs (files, running jobs).
    const documents = await tx.db.sql<{ id: number }>`select id from quiz.documents where user_id = ${userId}`
    for (const d of documents) await deleteDocument(tx, d.id)
    const [row] = await tx.db.sql<{ id: number }>`delete from quiz.users where id = ${userId} returning id`
    if (!row) throw notFound()
    await tx.db.sql`delete from core.jobs where service = 'quiz' and owner_id = ${userId}`
    await tx.kv.deletePrefix(`quiz:user:${userId}:`)
  })
}
