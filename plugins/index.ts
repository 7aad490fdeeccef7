// The plugin list the apps are built from, in migration order.
import type { PluginDefinition } from '../src/plugin'
import admin from './admin'
import clinical from './clinical'
import directory from './directory'
import learning from './learning'
import quiz from './quiz'

export const plugins: PluginDefinition<any>[] = [quiz, clinical, learning, directory, admin]
